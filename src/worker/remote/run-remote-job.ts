import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, EngineStage, OutputFile, StyleArtifact, UpstreamState } from '../../engines/engine.js';
import { EngineError } from '../../engines/engine.js';
import type { Clock } from '../../lib/clock.js';
import { infraFault } from '../../lib/infra-fault.js';
import type { InfraFault } from '../../lib/infra-fault.js';
import type { Log } from '../../lib/log.js';
import { HELD, lost } from '../../services/jobs/run-outcomes.js';
import type { Held, Lost } from '../../services/jobs/run-outcomes.js';
import { FAIL_MESSAGE_MAX, WORKER_FAIL_CODES } from '../../services/remote/remote-constants.js';
import type { ClaimedJobView, CompletedOutputBody, FailRequestBody, ProgressRequestBody } from '../../services/remote/remote-views.js';
import { ENGINE_FAILED_MESSAGE, errorDetail } from '../job-errors.js';
import { styleOf } from '../reported-style.js';
import { COMPLETED, runHarnessed } from '../run-harness.js';
import type { Completed, RunEnd, RunSink } from '../run-harness.js';
import { JobStopped, ServerUnreachable } from './protocol-client.js';
import type { WorkerClient } from './protocol-client.js';
import { remoteInputLoader } from './inputs.js';
import type { RemoteInputLimits } from './inputs.js';

export interface RemoteRunDeps {
  readonly client: WorkerClient;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: Log;
  readonly inputs: RemoteInputLimits;
  /** Where each run's scratch directory is made (default: the OS temp dir). */
  readonly scratchRoot?: string;
}

/** What the client reads of a job this worker gave back at shutdown, should that be its last attempt. */
export const SHUTDOWN_MESSAGE = 'the worker running the job stopped before it finished';
const UNREACHABLE_MESSAGE = 'the worker running the job lost its connection to the server';
/** What a job failed at this worker's deadline says, should the server take the worker's word for it (its own clock decides). */
export const TIMEOUT_MESSAGE = "the job ran longer than its model's timeout";

/** The shortest and longest wait between heartbeats. */
const MIN_BEAT_MS = 100;
const MAX_BEAT_MS = 60_000;

/** A fault of this machine or of the way to the server, not of the job: handed back for another attempt. */
type RemoteFault = InfraFault | 'unreachable';

/**
 * Runs one claimed job on the engine (run-harness.ts) and reports it over the protocol: the
 * engine's stages as progress (a preview uploaded first), heartbeats every third of the lease, the
 * outputs uploaded from the run's scratch directory, then one `complete` or `fail`. A 409 from the
 * server (cancel, delete, lost lease, timeout) stops the engine with the matching `RunStopped`, so
 * an engine cancels its work at a provider or ComfyUI as it does in-process, and ends the run
 * without a word back. At the job's deadline the harness stops the engine itself and the worker
 * reports the timeout; `hardStop` (the worker's shutdown grace is over) hands the job back with
 * `fail … retryable: true`.
 */
export async function runRemoteJob(job: ClaimedJobView, deps: RemoteRunDeps, hardStop: AbortSignal): Promise<void> {
  deps.log.info({ jobId: job.id, model: job.model, attempt: job.attempt }, 'job claimed');
  await runHarnessed({ id: job.id, model: job.model, request: job.request }, new RemoteSink(job, deps), deps, hardStop);
}

/** A 409's reason as the run's loss: the server's stop reasons are the job runs' own words. */
const answered = (err: unknown): Lost | undefined => (err instanceof JobStopped ? lost(err.reason) : undefined);

/** The remote run's writes: calls of the worker protocol, each guarded by the lease on the server. */
class RemoteSink implements RunSink<RemoteFault> {
  readonly #job: ClaimedJobView;
  readonly #deps: RemoteRunDeps;
  readonly #loadInput: ReturnType<typeof remoteInputLoader>;
  readonly deadlineMs: number;
  #expiresAt: number;
  #dir: string | undefined;
  /** Files sent, by name: their size and time, so a preview that is also an output is sent once. */
  readonly #uploaded = new Map<string, string>();
  /** The run's stop: an upload under way ends with it. */
  #signal: AbortSignal | undefined;

  constructor(job: ClaimedJobView, deps: RemoteRunDeps) {
    this.#job = job;
    this.#deps = deps;
    this.#loadInput = remoteInputLoader(deps.client, job, deps.inputs);
    this.deadlineMs = Date.parse(job.deadline);
    this.#expiresAt = Date.parse(job.lease_expires_at);
  }

  get #meta() {
    return { jobId: this.#job.id, model: this.#job.model, attempt: this.#job.attempt };
  }

  /** A third of what is left of the lease (the server's answers move it on). */
  beatInMs(): number {
    const third = Number.isFinite(this.#expiresAt) ? (this.#expiresAt - this.#deps.clock.nowMs()) / 3 : MAX_BEAT_MS;
    return Math.min(MAX_BEAT_MS, Math.max(MIN_BEAT_MS, third));
  }

  beat(fraction: number | undefined): Promise<Held | Lost> {
    return this.#progress(fraction === undefined ? {} : { fraction });
  }

  async open(signal: AbortSignal): Promise<string> {
    this.#signal = signal;
    this.#dir = await mkdtemp(join(this.#deps.scratchRoot ?? tmpdir(), 'mediagen-job-'));
    return this.#dir;
  }

  loadInput(url: string, field: string, signal: AbortSignal): Promise<Buffer> {
    return this.#loadInput(url, field, signal);
  }

  loadStyle(id: string): Promise<StyleArtifact> {
    const styles = this.#job.styles ?? {};
    const artifact = Object.hasOwn(styles, id) ? styles[id] : undefined;
    if (!artifact) return Promise.reject(new EngineError('input_invalid', `style '${id}' not found`));
    return Promise.resolve(artifact);
  }

  // Kept by the server with the job (a progress call's `upstream`), handed to the next claim.
  async loadUpstream(): Promise<UpstreamState | undefined> {
    const u = this.#job.upstream;
    return u ? { engine: u.engine, id: u.id, state: u.state } : undefined;
  }

  saveUpstream(state: UpstreamState): Promise<Held | Lost> {
    return this.#progress({ upstream: { engine: state.engine, id: state.id, state: { ...state.state } } });
  }

  async stage(stage: EngineStage, preview: OutputFile | undefined): Promise<Held | Lost> {
    const refused = preview && (await this.#upload(preview));
    if (refused) return refused;
    return this.#progress({ status: stage, ...(preview ? { preview: preview.name } : {}) });
  }

  async complete(reported: readonly OutputFile[]): Promise<Completed | Lost> {
    // A training run's style file is sent as `style` (the server checks the model makes one), never uploaded.
    const style = await styleOf(reported, this.#dir!, reported.some((f) => f.role === 'style'));
    const files = reported.filter((f) => f.role !== 'style');
    for (const f of files) {
      const refused = await this.#upload(f);
      if (refused) return refused;
    }
    try {
      await this.#deps.client.complete(this.#job.id, { lease_id: this.#job.lease_id, outputs: files.map(completedOutput), ...(style ? { style } : {}) });
    } catch (err) {
      const loss = answered(err);
      if (loss) return loss;
      throw err;
    }
    this.#deps.log.info(this.#meta, 'job completed');
    return COMPLETED;
  }

  async #progress(body: Omit<ProgressRequestBody, 'lease_id'>): Promise<Held | Lost> {
    try {
      const answer = await this.#deps.client.progress(this.#job.id, { lease_id: this.#job.lease_id, ...body });
      const at = Date.parse(answer.lease_expires_at);
      if (Number.isFinite(at)) this.#expiresAt = at;
      return HELD;
    } catch (err) {
      const loss = answered(err);
      if (loss) return loss;
      throw err;
    }
  }

  /** Sends one file, unless it was sent as it is already (a preview that is also an output). */
  async #upload(file: OutputFile): Promise<Lost | undefined> {
    const path = join(this.#dir!, file.name);
    const { size, mtimeMs } = await stat(path);
    if (this.#uploaded.get(file.name) === `${size}:${mtimeMs}`) return undefined;
    try {
      await this.#deps.client.upload(this.#job, file.name, path, file.contentType, this.#signal!);
    } catch (err) {
      const loss = answered(err);
      if (loss) return loss;
      throw err;
    }
    this.#uploaded.set(file.name, `${size}:${mtimeMs}`);
    return undefined;
  }

  fault(reason: unknown): RemoteFault | undefined {
    if (reason instanceof ServerUnreachable) return 'unreachable';
    // An engine's error is the job's (an input that cannot be fetched), whatever errno lies beneath.
    return reason instanceof EngineError ? undefined : infraFault(reason);
  }

  /** The one report of a run that did not complete. */
  async settle(end: RunEnd<RemoteFault>): Promise<void> {
    const { log } = this.#deps;
    const meta = this.#meta;
    let report: Omit<FailRequestBody, 'lease_id'>;
    switch (end.kind) {
      case 'lost':
        // The server decided the job's fate (cancel, delete, timeout, another worker's lease): nothing to send.
        log.info({ ...meta, why: end.lost.why }, 'job run stopped by the server');
        return;
      case 'stopped':
        if (end.why === 'timeout') {
          // The server fails it with `timeout` at its own deadline; this says so now, as the engine has stopped.
          report = { code: 'timeout', message: TIMEOUT_MESSAGE, retryable: false };
          log.info(meta, 'job passed its deadline; engine stopped');
        } else {
          report = { code: 'engine_failed', message: SHUTDOWN_MESSAGE, retryable: true };
          log.info(meta, 'job handed back at shutdown');
        }
        break;
      case 'retry':
        report = { code: 'engine_failed', message: ENGINE_FAILED_MESSAGE, retryable: true };
        log.warn({ ...meta, err: errorDetail(end.reason) }, 'engine failed this attempt; handing the job back');
        break;
      case 'fault':
        // This machine's disk or network, not the job: another attempt may well succeed.
        report = { code: 'engine_failed', message: end.fault === 'unreachable' ? UNREACHABLE_MESSAGE : ENGINE_FAILED_MESSAGE, retryable: true };
        log.error({ ...meta, err: errorDetail(end.reason) }, 'job run failed on this worker; handing it back');
        break;
      case 'failed': {
        if (end.error.code === 'engine_failed') log.error({ ...meta, err: errorDetail(end.reason) }, 'engine failed');
        const code = WORKER_FAIL_CODES.find((c) => c === end.error.code) ?? 'engine_failed';
        report = { code, message: end.error.message.slice(0, FAIL_MESSAGE_MAX), retryable: false };
        break;
      }
    }
    try {
      const answer = await this.#deps.client.fail(this.#job.id, { lease_id: this.#job.lease_id, ...report });
      log.info({ ...meta, code: report.code, status: answer.status }, 'job failure reported');
    } catch (err) {
      // A 409: the job was no longer ours. Anything else: the lease runs out and the server requeues it.
      log.warn({ ...meta, err: { message: (err as Error).message } }, 'could not report the job failure');
    }
  }

  async close(): Promise<void> {
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true }).catch((err: unknown) => this.#deps.log.warn({ ...this.#meta, err: errorDetail(err) }, "could not remove a run's scratch directory"));
  }
}

function completedOutput(f: OutputFile): CompletedOutputBody {
  const measured = f.durationUs;
  return {
    name: f.name,
    ...(f.role === 'model' || f.role === 'preview' ? { role: f.role } : {}),
    ...(f.key !== undefined ? { key: f.key } : {}),
    ...(measured !== undefined && Number.isSafeInteger(measured) && measured >= 0 ? { duration_us: measured } : {}),
  };
}
