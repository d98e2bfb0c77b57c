import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, EngineContext, EngineStage, OutputFile, StyleArtifact } from '../engines/engine.js';
import { EngineError, RetryableEngineError, RunStopped } from '../engines/engine.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { withFields } from '../lib/log.js';
import type { JobSignals } from '../services/jobs/job-signals.js';
import { INFRA_FAULT_ALERT, infraFault } from '../lib/infra-fault.js';
import type { InfraFault } from '../lib/infra-fault.js';
import { timeoutError } from '../services/jobs/job-runs.js';
import { resultUrls } from '../services/common/result-urls.js';
import type { ClaimedJob, JobError, JobRuns } from '../services/jobs/job-runs.js';
import { clientJobError, errorDetail } from './job-errors.js';
import { styleOf } from './reported-style.js';
import type { JobStatus } from '../domain/states.js';
import type { OutputScratch, OutputStore } from '../outputs/output-store.js';

/** What a run needs of the output store. */
export type RunOutputs = Pick<OutputStore, 'scratch' | 'put' | 'url' | 'remove' | 'removeFile'>;

export interface RunDeps {
  readonly runs: JobRuns;
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
 * Runs one claimed job to its end: heartbeats keep the lease, a timer enforces the model's
 * timeout, each engine stage becomes a guarded status write, and whatever stops the run (cancel,
 * lost lease, timeout, shutdown, engine error) ends in exactly one outcome for the job.
 */
export async function runJob(job: ClaimedJob, given: RunDeps, shutdown: AbortSignal): Promise<void> {
  // Every line about the job names the request that created it (X-Request-Id), when one did.
  const deps = job.requestId === null ? given : { ...given, log: withFields(given.log, { requestId: job.requestId }) };
  const { runs, clock, outputs, log } = deps;
  const run = new AbortController();
  const stop = (why: RunStopped['why']) => {
    if (!run.signal.aborted) run.abort(new RunStopped(why));
  };
  // Ends the heartbeat and the timeout timer when the run is over.
  const background = new AbortController();
  const offCancel = deps.signals.onCancelled((id) => id === job.id && stop('cancelled'));
  const onShutdown = () => stop('shutdown');
  shutdown.addEventListener('abort', onShutdown, { once: true });

  let status: JobStatus = 'scheduled';
  // What the engine last reported of its progress; the next heartbeat stores it.
  const progress: { value: number | undefined } = { value: undefined };
  let preview: string | undefined;
  let scratch: OutputScratch | undefined;
  // Once the completion has committed, nothing the run does may remove the job's outputs.
  let completed = false;
  try {
    const left = runs.deadline(job) / 1000 - clock.nowMs();
    if (left <= 0) throw new RunStopped('timeout');
    if (shutdown.aborted) throw new RunStopped('shutdown');
    clock.sleep(left, background.signal).then(() => stop('timeout'), () => undefined);
    void heartbeat(job, deps, background.signal, () => stop('lost'), progress);

    scratch = await outputs.scratch(job.outputKey);
    const outDir = scratch.dir;
    const ctx: EngineContext = {
      signal: run.signal,
      outDir,
      loadInput: (url, field) => deps.loadInput(url, field, run.signal),
      loadStyle: (id) => deps.loadStyle(id),
      deadlineMs: runs.deadline(job) / 1000,
      progress: (fraction) => {
        if (Number.isFinite(fraction)) progress.value = Math.min(1, Math.max(0, fraction));
      },
      upstream: {
        load: () => runs.upstreamOf(job),
        save: async (state) => {
          run.signal.throwIfAborted();
          if (!(await runs.saveUpstream(job, state))) stop('lost');
          run.signal.throwIfAborted();
        },
      },
      stage: async (stage: EngineStage, file?: OutputFile) => {
        run.signal.throwIfAborted();
        // The preview is stored before the status that shows its URL.
        if (file) await publish(job, deps, outDir, file.name);
        // A preview with a role (a 3D model's render) is listed in the result's {type, url} shape.
        const patch = file ? { result: { urls: resultUrls([file], (name) => outputs.url(job.outputKey, name)) } } : undefined;
        if (!(await runs.advance(job, status, stage, patch))) stop('lost');
        run.signal.throwIfAborted();
        status = stage;
        if (file) preview = file.name;
      },
    };
    const reported = await deps.engine.run({ id: job.id, model: job.type, request: job.request }, ctx);
    run.signal.throwIfAborted();
    // A training run's style artifact is stored with the style its completion creates, never served.
    const style = await styleOf(reported, outDir, runs.makesStyle(job.type));
    const files = reported.filter((f) => f.role !== 'style');
    for (const f of files) {
      // A final file named like the preview and not written again is stored already.
      if (f.name === preview && !(await inDir(outDir, f.name))) continue;
      await publish(job, deps, outDir, f.name);
    }
    const urls = resultUrls(files, (name) => outputs.url(job.outputKey, name));
    // What a metered model's job is charged for: the main output's measured length. A length that
    // is not a whole, non-negative number is no measurement: the job is charged its hold, as when
    // an engine reports none (docs/billing.md).
    const measured = files[0]?.durationUs;
    const usage = measured !== undefined && Number.isSafeInteger(measured) && measured >= 0 ? { outputUs: measured } : undefined;
    if (!(await runs.complete(job, status, { urls }, usage, style))) throw new RunStopped('lost');
    completed = true;
    log.info({ jobId: job.id, model: job.type, attempt: job.attempts }, 'job completed');
    if (preview && !files.some((f) => f.name === preview)) await outputs.removeFile(job.outputKey, preview);
  } catch (err) {
    if (completed) {
      // The job is completed and charged, and its key is a style's or a finished job's: however the
      // run was stopped or failed after that, removing outputs now would take away served files
      // (a deleted training job's style cover among them). A preview it could not remove stays.
      log.warn({ jobId: job.id, err: errorDetail(err) }, 'could not tidy up after a completed job');
    } else {
      await settle(job, deps, run.signal.aborted ? run.signal.reason : err);
    }
  } finally {
    // Stored files are not in the scratch: what is left there is the engine's working files.
    await scratch?.dispose().catch((err: unknown) => log.warn({ jobId: job.id, err: errorDetail(err) }, "could not remove a run's scratch directory"));
    background.abort();
    offCancel();
    shutdown.removeEventListener('abort', onShutdown);
  }
}

/**
 * Stores one file the engine reported. A failure because the job is gone or cancelled (a DELETE
 * removed its key under the run) stops the run as `lost`, not as the engine's failure.
 */
async function publish(job: ClaimedJob, deps: RunDeps, outDir: string, name: string): Promise<void> {
  try {
    await deps.outputs.put(job.outputKey, name, join(outDir, name));
  } catch (err) {
    const now = await deps.runs.find(job.id);
    if (!now || now.status === 'cancelled') throw new RunStopped('lost');
    throw err;
  }
}

const inDir = (dir: string, name: string): Promise<boolean> =>
  access(join(dir, name)).then(
    () => true,
    () => false,
  );

async function heartbeat(job: ClaimedJob, deps: RunDeps, signal: AbortSignal, lost: () => void, progress: { readonly value: number | undefined }): Promise<void> {
  try {
    for (;;) {
      await deps.clock.sleep(deps.runs.policy.leaseMs / 3, signal);
      if (!(await deps.runs.heartbeat(job, progress.value))) return lost();
    }
  } catch {
    // The run ended (its signal aborted) or the store failed; a missed beat only risks a reclaim.
  }
}

/** The one outcome of a run that did not complete. */
async function settle(job: ClaimedJob, deps: RunDeps, reason: unknown): Promise<void> {
  const { runs, log } = deps;
  const meta = { jobId: job.id, model: job.type, attempt: job.attempts };
  if (reason instanceof RunStopped && reason.why === 'shutdown') {
    if (await runs.handBack(job, { atShutdown: true })) log.info(meta, 'job handed back at shutdown');
    return;
  }
  if (reason instanceof RunStopped && (reason.why === 'cancelled' || reason.why === 'lost')) {
    await letGo(job, deps);
    log.info({ ...meta, why: reason.why }, 'job run stopped');
    return;
  }
  if (reason instanceof RetryableEngineError) {
    // This attempt's trouble (a model process died): another attempt, while the job has attempts left.
    log.warn({ ...meta, err: errorDetail(reason) }, 'engine failed this attempt; retrying the job');
    const outcome = await runs.retryOrFail(job, clientJobError(reason));
    if (outcome === 'failed') await deps.outputs.remove(job.outputKey);
    else if (outcome === undefined) await letGo(job, deps);
    return;
  }
  const fault = reason instanceof RunStopped ? undefined : infraFault(reason);
  if (fault) return settleFault(job, deps, reason, fault);
  if (!(reason instanceof RunStopped) && (!(reason instanceof EngineError) || reason.code === 'engine_failed')) {
    // The client gets a fixed sentence; the whole story stays here, under the job id.
    log.error({ ...meta, err: errorDetail(reason) }, 'engine failed');
  }
  const error = reason instanceof RunStopped ? timeoutError(runs.policy.timeoutMs(job.type, job.request)) : clientJobError(reason);
  await end(job, deps, error);
}

async function end(job: ClaimedJob, deps: RunDeps, error: JobError): Promise<void> {
  if (await deps.runs.fail(job, error)) {
    deps.log.info({ jobId: job.id, model: job.type, attempt: job.attempts, code: error.code }, 'job failed');
    await deps.outputs.remove(job.outputKey);
  } else {
    await letGo(job, deps);
  }
}

/**
 * The disk, the file table or the database failed under the run: not the job's fault. The job
 * goes back to the queue with a backoff, unbilled, and operators get an alert. If even that write
 * fails (the database is gone), the lease runs out and the reaper requeues the job later.
 */
async function settleFault(job: ClaimedJob, deps: RunDeps, reason: unknown, fault: InfraFault): Promise<void> {
  const alert = { alert: INFRA_FAULT_ALERT, jobId: job.id, model: job.type, attempt: job.attempts, faults: job.faultCount + 1, errno: fault.code, kind: fault.kind };
  try {
    const outcome = await deps.runs.handBackForFault(job, fault);
    if (!outcome) {
      deps.log.error({ ...alert, err: errorDetail(reason) }, 'infrastructure fault during a job run; the job was no longer ours');
      await letGo(job, deps);
    } else if ('failed' in outcome) {
      deps.log.error({ ...alert, err: errorDetail(reason), gaveUp: true }, 'infrastructure fault during a job run; giving up: job failed with server_unavailable');
      // On a read-only disk even this fails; the files then wait for an operator (or a janitor).
      await deps.outputs.remove(job.outputKey).catch((err: unknown) => deps.log.warn({ jobId: job.id, err: errorDetail(err) }, 'could not remove the outputs of a failed job'));
    } else {
      deps.log.error({ ...alert, err: errorDetail(reason), retryInMs: outcome.retryInMs }, 'infrastructure fault during a job run; job handed back to the queue');
    }
  } catch (err) {
    deps.log.error(
      { ...alert, err: errorDetail(reason), handBackError: errorDetail(err) },
      'infrastructure fault during a job run; the hand-back could not be written, the lease will expire and the job be requeued',
    );
  }
}

/**
 * The worker no longer holds the job: someone else decided its fate. If it is cancelled or gone,
 * its files go too; if another worker reclaimed it, the directory is that worker's now.
 */
async function letGo(job: ClaimedJob, deps: RunDeps): Promise<void> {
  const now = await deps.runs.find(job.id);
  if (!now || now.status === 'cancelled') await deps.outputs.remove(job.outputKey);
}
