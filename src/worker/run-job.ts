import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, EngineStage, OutputFile, StyleArtifact, UpstreamState } from '../engines/engine.js';
import { RunStopped } from '../engines/engine.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { withFields } from '../lib/log.js';
import type { JobSignals } from '../services/jobs/job-signals.js';
import { INFRA_FAULT_ALERT, infraFault } from '../lib/infra-fault.js';
import type { InfraFault } from '../lib/infra-fault.js';
import { timeoutError } from '../services/jobs/job-runs.js';
import { resultUrls } from '../services/common/result-urls.js';
import type { ClaimedJob, Ended, Held, JobError, JobRuns, Lost, Requeued } from '../services/jobs/job-runs.js';
import type { JobRoutes } from '../services/jobs/job-routes.js';
import { HELD, lost } from '../services/jobs/run-outcomes.js';
import { clientJobError, errorDetail } from './job-errors.js';
import { styleOf } from './reported-style.js';
import { COMPLETED, runHarnessed } from './run-harness.js';
import type { Completed, RouteSink, RunEnd, RunSink } from './run-harness.js';
import type { JobStatus } from '../domain/states.js';
import type { OutputScratch, OutputStore } from '../outputs/output-store.js';

/** What a run needs of the output store. */
export type RunOutputs = Pick<OutputStore, 'scratch' | 'put' | 'url' | 'remove' | 'removeFile'>;

export interface RunDeps {
  readonly runs: JobRuns;
  /** Routing's records (engine places, routes); absent: the router routes unrecorded and unlimited. */
  readonly routes?: JobRoutes;
  readonly engine: Engine;
  readonly outputs: RunOutputs;
  readonly clock: Clock;
  readonly signals: JobSignals;
  loadInput(url: string, field: string, signal: AbortSignal): Promise<Buffer>;
  /** A trained style's artifact (EngineContext.loadStyle). */
  loadStyle(id: string): Promise<StyleArtifact>;
  readonly log: Log;
  /** The data dir check: while it fails, the worker claims nothing (a claimed job would only fault). */
  readonly readiness?: { canStore(): Promise<boolean> };
}

export { RunStopped };

/**
 * Runs one claimed job in this process (run-harness.ts): heartbeats keep the lease, the harness
 * stops the engine at the job's deadline, each engine stage becomes a guarded status write, and
 * whatever stops the run (cancel, lost lease, timeout, shutdown, engine error) ends in exactly one
 * outcome for the job.
 */
export async function runJob(job: ClaimedJob, given: RunDeps, shutdown: AbortSignal): Promise<void> {
  // Every line about the job names the request that created it (X-Request-Id), when one did.
  const deps = job.requestId === null ? given : { ...given, log: withFields(given.log, { requestId: job.requestId }) };
  await runHarnessed({ id: job.id, model: job.type, request: job.request }, new LocalSink(job, deps), deps, shutdown);
}

/** The in-process run's writes: the job store (moves under the lease) and the output store. */
class LocalSink implements RunSink<InfraFault> {
  readonly #job: ClaimedJob;
  readonly #deps: RunDeps;
  readonly deadlineMs: number;
  #status: JobStatus = 'scheduled';
  #scratch: OutputScratch | undefined;
  /** The stored preview's name. */
  #preview: string | undefined;
  readonly route: RouteSink | undefined;

  constructor(job: ClaimedJob, deps: RunDeps) {
    this.#job = job;
    this.#deps = deps;
    this.deadlineMs = deps.runs.deadline(job) / 1000;
    const routes = deps.routes;
    this.route = routes && {
      waitingSinceMs: job.createdAt / 1000,
      acquire: (engine, max) => routes.acquire(job, engine, max),
      release: () => routes.release(job),
      record: (trail, engine) => routes.record(job, trail, engine),
    };
  }

  get #meta() {
    return { jobId: this.#job.id, model: this.#job.type, attempt: this.#job.attempts };
  }

  beatInMs(): number {
    return this.#deps.runs.policy.leaseMs / 3;
  }

  beat(progress: number | undefined): Promise<Held | Lost> {
    return this.#deps.runs.heartbeat(this.#job, progress);
  }

  /** A cancel committed in this process or heard from another (job-signals.ts). */
  watch(stop: (loss: Lost) => void): () => void {
    return this.#deps.signals.onCancelled((id) => id === this.#job.id && stop(lost('cancelled')));
  }

  async open(): Promise<string> {
    this.#scratch = await this.#deps.outputs.scratch(this.#job.outputKey);
    return this.#scratch.dir;
  }

  loadInput(url: string, field: string, signal: AbortSignal): Promise<Buffer> {
    return this.#deps.loadInput(url, field, signal);
  }

  loadStyle(id: string): Promise<StyleArtifact> {
    return this.#deps.loadStyle(id);
  }

  loadUpstream(): Promise<UpstreamState | undefined> {
    return this.#deps.runs.upstreamOf(this.#job);
  }

  saveUpstream(state: UpstreamState): Promise<Held | Lost> {
    return this.#deps.runs.saveUpstream(this.#job, state);
  }

  async stage(stage: EngineStage, file: OutputFile | undefined): Promise<Held | Lost> {
    const { runs, outputs } = this.#deps;
    // The preview is stored before the status that shows its URL.
    const refused = file && (await this.#publish(file.name));
    if (refused) return refused;
    // A preview with a role (a 3D model's render) is listed in the result's {type, url} shape.
    const patch = file ? { result: { urls: resultUrls([file], (name) => outputs.url(this.#job.outputKey, name)) } } : undefined;
    const moved = await runs.advance(this.#job, this.#status, stage, patch);
    // Stale cannot be: this run is the job's only writer while it holds the lease.
    if (moved.kind !== 'moved') return moved.kind === 'lost' ? moved : lost('lease_lost');
    this.#status = stage;
    if (file) this.#preview = file.name;
    return HELD;
  }

  async complete(reported: readonly OutputFile[]): Promise<Completed | Lost> {
    const { runs, outputs, log } = this.#deps;
    const job = this.#job;
    const outDir = this.#scratch!.dir;
    // A training run's style artifact is stored with the style its completion creates, never served.
    const style = await styleOf(reported, outDir, runs.makesStyle(job.type));
    const files = reported.filter((f) => f.role !== 'style');
    for (const f of files) {
      // A final file named like the preview and not written again is stored already.
      if (f.name === this.#preview && !(await inDir(outDir, f.name))) continue;
      const refused = await this.#publish(f.name);
      if (refused) return refused;
    }
    const urls = resultUrls(files, (name) => outputs.url(job.outputKey, name));
    // What a metered model's job is charged for: the main output's measured length. A length that
    // is not a whole, non-negative number is no measurement: the job is charged its hold, as when
    // an engine reports none (docs/billing.md).
    const measured = files[0]?.durationUs;
    const usage = measured !== undefined && Number.isSafeInteger(measured) && measured >= 0 ? { outputUs: measured } : undefined;
    const ended = await runs.complete(job, this.#status, { urls }, usage, style);
    if (ended.kind !== 'ended') return ended.kind === 'lost' ? ended : lost('lease_lost');
    log.info(this.#meta, 'job completed');
    const preview = this.#preview;
    if (preview && !files.some((f) => f.name === preview)) {
      // The job is completed and charged: a preview that could not be removed stays, nothing else changes.
      await outputs.removeFile(job.outputKey, preview).catch((err: unknown) => log.warn({ jobId: job.id, err: errorDetail(err) }, 'could not tidy up after a completed job'));
    }
    return COMPLETED;
  }

  /**
   * Stores one file the engine reported. A failure because the job is no longer the run's (a
   * DELETE removed its key under the run) answers that loss, as the lease says; any other is thrown.
   */
  async #publish(name: string): Promise<Lost | undefined> {
    const job = this.#job;
    try {
      await this.#deps.outputs.put(job.outputKey, name, join(this.#scratch!.dir, name));
      return undefined;
    } catch (err) {
      const lease = await this.#deps.runs.heartbeat(job).catch(() => HELD);
      if (lease.kind === 'lost') return lease;
      throw err;
    }
  }

  fault(reason: unknown): InfraFault | undefined {
    return infraFault(reason);
  }

  async settle(end: RunEnd<InfraFault>): Promise<void> {
    const { runs, log } = this.#deps;
    const job = this.#job;
    const meta = this.#meta;
    switch (end.kind) {
      case 'stopped':
        if (end.why === 'timeout') return this.#fail(timeoutError(runs.policy.timeoutMs(job.type, job.request)));
        return this.#handedBack(await runs.handBack(job, { atShutdown: true }), 'job handed back at shutdown');
      case 'lost':
        await this.#letGo(end.lost);
        log.info({ ...meta, why: end.lost.why }, 'job run stopped');
        return;
      case 'retry':
        // This attempt's trouble (a model process died): another attempt, while the job has attempts left.
        log.warn({ ...meta, err: errorDetail(end.reason) }, 'engine failed this attempt; retrying the job');
        return this.#handedBack(await runs.retryOrFail(job, clientJobError(end.reason)));
      case 'fault':
        return this.#settleFault(end.reason, end.fault);
      case 'failed':
        // The client gets a fixed sentence; the whole story stays here, under the job id.
        if (end.error.code === 'engine_failed') log.error({ ...meta, err: errorDetail(end.reason) }, 'engine failed');
        return this.#fail(end.error);
    }
  }

  async #fail(error: JobError): Promise<void> {
    const outcome = await this.#deps.runs.fail(this.#job, error);
    if (outcome.kind === 'ended') this.#deps.log.info({ ...this.#meta, code: error.code }, 'job failed');
    await this.#letGo(outcome);
  }

  async #handedBack(outcome: Requeued | Ended | Lost, line?: string): Promise<void> {
    if (outcome.kind === 'requeued' && line) this.#deps.log.info(this.#meta, line);
    await this.#letGo(outcome);
  }

  /** Removes the job's files when its outcome says they go: it failed, or was cancelled or deleted. */
  async #letGo(outcome: Requeued | Ended | Lost): Promise<void> {
    if (outcome.kind !== 'requeued' && outcome.outputsGo) await this.#deps.outputs.remove(this.#job.outputKey);
  }

  /**
   * The disk, the file table or the database failed under the run: not the job's fault. The job
   * goes back to the queue with a backoff, unbilled, and operators get an alert. If even that write
   * fails (the database is gone), the lease runs out and the reaper requeues the job later.
   */
  async #settleFault(reason: unknown, fault: InfraFault): Promise<void> {
    const { runs, log, outputs } = this.#deps;
    const job = this.#job;
    const alert = { alert: INFRA_FAULT_ALERT, jobId: job.id, model: job.type, attempt: job.attempts, faults: job.faultCount + 1, errno: fault.code, kind: fault.kind };
    try {
      const outcome = await runs.handBackForFault(job, fault);
      if (outcome.kind === 'lost') {
        log.error({ ...alert, err: errorDetail(reason) }, 'infrastructure fault during a job run; the job was no longer ours');
        await this.#letGo(outcome);
      } else if (outcome.kind === 'ended') {
        log.error({ ...alert, err: errorDetail(reason), gaveUp: true }, 'infrastructure fault during a job run; giving up: job failed with server_unavailable');
        // On a read-only disk even this fails; the files then wait for an operator (or a janitor).
        await outputs.remove(job.outputKey).catch((err: unknown) => log.warn({ jobId: job.id, err: errorDetail(err) }, 'could not remove the outputs of a failed job'));
      } else {
        log.error({ ...alert, err: errorDetail(reason), retryInMs: outcome.retryInMs }, 'infrastructure fault during a job run; job handed back to the queue');
      }
    } catch (err) {
      log.error(
        { ...alert, err: errorDetail(reason), handBackError: errorDetail(err) },
        'infrastructure fault during a job run; the hand-back could not be written, the lease will expire and the job be requeued',
      );
    }
  }

  /** Stored files are not in the scratch: what is left there is the engine's working files. */
  async close(): Promise<void> {
    await this.#scratch
      ?.dispose()
      .catch((err: unknown) => this.#deps.log.warn({ jobId: this.#job.id, err: errorDetail(err) }, "could not remove a run's scratch directory"));
  }
}

const inDir = (dir: string, name: string): Promise<boolean> =>
  access(join(dir, name)).then(
    () => true,
    () => false,
  );
