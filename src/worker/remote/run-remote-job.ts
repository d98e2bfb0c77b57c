import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, EngineContext, EngineStage, OutputFile, StyleArtifact } from '../../engines/engine.js';
import { EngineError, RetryableEngineError } from '../../engines/engine.js';
import type { Clock } from '../../lib/clock.js';
import { infraFault } from '../../lib/infra-fault.js';
import type { Log } from '../../lib/log.js';
import { FAIL_MESSAGE_MAX, WORKER_FAIL_CODES } from '../../services/remote/remote-constants.js';
import type { StopReason } from '../../services/remote/remote-constants.js';
import type { ClaimedJobView, CompletedOutputBody, FailRequestBody } from '../../services/remote/remote-views.js';
import { ENGINE_FAILED_MESSAGE, clientJobError, errorDetail } from '../job-errors.js';
import { styleOf } from '../reported-style.js';
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

/** Why a run stopped before it could complete. `shutdown`: this worker is stopping. */
export class RemoteRunStopped extends Error {
  override readonly name = 'RemoteRunStopped';
  constructor(readonly why: StopReason | 'shutdown') {
    super(`run stopped: ${why}`);
  }
}

/** What the client reads of a job this worker gave back at shutdown, should that be its last attempt. */
export const SHUTDOWN_MESSAGE = 'the worker running the job stopped before it finished';
const UNREACHABLE_MESSAGE = 'the worker running the job lost its connection to the server';

/** The shortest and longest wait between heartbeats. */
const MIN_BEAT_MS = 100;
const MAX_BEAT_MS = 60_000;

/**
 * Runs one claimed job on the engine and reports it over the protocol: the engine's stages as
 * progress (a preview uploaded first), heartbeats every third of the lease, the outputs uploaded
 * from the run's scratch directory, then one `complete` or `fail`. A 409 from the server (cancel,
 * delete, lost lease, timeout) stops the engine and ends the run without a word back; `hardStop`
 * (the worker's shutdown grace is over) hands the job back with `fail … retryable: true`.
 */
export async function runRemoteJob(job: ClaimedJobView, deps: RemoteRunDeps, hardStop: AbortSignal): Promise<void> {
  const { client, log } = deps;
  const meta = { jobId: job.id, model: job.model, attempt: job.attempt };
  const run = new AbortController();
  const stop = (why: RemoteRunStopped['why']) => {
    if (!run.signal.aborted) run.abort(new RemoteRunStopped(why));
  };
  const onHardStop = () => stop('shutdown');
  hardStop.addEventListener('abort', onHardStop, { once: true });
  const background = new AbortController();
  let outDir: string | undefined;
  try {
    if (hardStop.aborted) throw new RemoteRunStopped('shutdown');
    log.info(meta, 'job claimed');
    const beats = new Heartbeat(job, deps, background.signal, stop);
    void beats.loop();
    outDir = await mkdtemp(join(deps.scratchRoot ?? tmpdir(), 'mediagen-job-'));
    const dir = outDir;
    const uploaded = new Map<string, string>();
    const upload = async (file: OutputFile) => {
      const path = join(dir, file.name);
      const { size, mtimeMs } = await stat(path);
      // A preview that is also a final output is sent once, unless the engine wrote it again.
      if (uploaded.get(file.name) === `${size}:${mtimeMs}`) return;
      await guarded(() => client.upload(job, file.name, path, file.contentType, run.signal), stop);
      uploaded.set(file.name, `${size}:${mtimeMs}`);
    };
    const loadInput = remoteInputLoader(client, job, deps.inputs);
    const ctx: EngineContext = {
      signal: run.signal,
      outDir: dir,
      loadInput: (url, field) => loadInput(url, field, run.signal),
      loadStyle: (id) => styleFor(job, id),
      deadlineMs: Date.parse(job.deadline),
      progress: (fraction) => beats.progress(fraction),
      // Kept by the server with the job (a progress call's `upstream`), handed to the next claim.
      upstream: {
        load: async () => (job.upstream ? { engine: job.upstream.engine, id: job.upstream.id, state: job.upstream.state } : undefined),
        save: async (state) => {
          run.signal.throwIfAborted();
          const answer = await guarded(() => client.progress(job.id, { lease_id: job.lease_id, upstream: { engine: state.engine, id: state.id, state: { ...state.state } } }), stop);
          beats.extended(answer.lease_expires_at);
          run.signal.throwIfAborted();
        },
      },
      stage: async (stage: EngineStage, preview?: OutputFile) => {
        run.signal.throwIfAborted();
        if (preview) await upload(preview);
        const answer = await guarded(() => client.progress(job.id, { lease_id: job.lease_id, status: stage, ...(preview ? { preview: preview.name } : {}) }), stop);
        beats.extended(answer.lease_expires_at);
        run.signal.throwIfAborted();
      },
    };
    const reported = await deps.engine.run({ id: job.id, model: job.model, request: job.request }, ctx);
    run.signal.throwIfAborted();
    // A training run's style file is sent as `style` (the server checks the model makes one), never uploaded.
    const style = await styleOf(reported, dir, reported.some((f) => f.role === 'style'));
    const files = reported.filter((f) => f.role !== 'style');
    for (const f of files) await upload(f);
    run.signal.throwIfAborted();
    await guarded(() => client.complete(job.id, { lease_id: job.lease_id, outputs: files.map(completedOutput), ...(style ? { style } : {}) }), stop);
    log.info(meta, 'job completed');
  } catch (err) {
    await settle(job, deps, run.signal.aborted ? run.signal.reason : err);
  } finally {
    background.abort();
    hardStop.removeEventListener('abort', onHardStop);
    if (outDir) await rm(outDir, { recursive: true, force: true }).catch((err: unknown) => log.warn({ ...meta, err: errorDetail(err) }, "could not remove a run's scratch directory"));
  }
}

/** A call whose 409 stops the run (with the server's reason) instead of failing it. */
async function guarded<T>(call: () => Promise<T>, stop: (why: StopReason) => void): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof JobStopped) {
      stop(err.reason);
      throw new RemoteRunStopped(err.reason);
    }
    throw err;
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

function styleFor(job: ClaimedJobView, id: string): Promise<StyleArtifact> {
  const artifact = Object.hasOwn(job.styles ?? {}, id) ? job.styles[id] : undefined;
  if (!artifact) return Promise.reject(new EngineError('input_invalid', `style '${id}' not found`));
  return Promise.resolve(artifact);
}

/**
 * Keeps the lease: a progress without a status every third of what is left of it, and one just
 * past the job's deadline, where the server's 409 `timeout` ends the run.
 */
class Heartbeat {
  #expiresAt: number;
  readonly #deadline: number;
  /** The engine's last reported fraction, sent with the next beat. */
  #fraction: number | undefined;

  constructor(
    private readonly job: ClaimedJobView,
    private readonly deps: RemoteRunDeps,
    private readonly signal: AbortSignal,
    private readonly stop: (why: StopReason) => void,
  ) {
    this.#expiresAt = Date.parse(job.lease_expires_at);
    this.#deadline = Date.parse(job.deadline);
  }

  progress(fraction: number): void {
    if (Number.isFinite(fraction)) this.#fraction = Math.min(1, Math.max(0, fraction));
  }

  extended(leaseExpiresAt: string): void {
    const at = Date.parse(leaseExpiresAt);
    if (Number.isFinite(at)) this.#expiresAt = at;
  }

  async loop(): Promise<void> {
    const { clock, client, log } = this.deps;
    try {
      for (;;) {
        const now = clock.nowMs();
        const third = Number.isFinite(this.#expiresAt) ? (this.#expiresAt - now) / 3 : MAX_BEAT_MS;
        let wait = Math.min(MAX_BEAT_MS, Math.max(MIN_BEAT_MS, third));
        if (Number.isFinite(this.#deadline) && this.#deadline >= now) wait = Math.min(wait, this.#deadline - now + MIN_BEAT_MS);
        await clock.sleep(wait, this.signal);
        try {
          const fraction = this.#fraction;
          this.extended((await client.progress(this.job.id, { lease_id: this.job.lease_id, ...(fraction === undefined ? {} : { fraction }) })).lease_expires_at);
        } catch (err) {
          if (this.signal.aborted) return;
          if (err instanceof JobStopped) return this.stop(err.reason);
          // A missed beat only risks the lease; the next one says whether it is still ours.
          log.warn({ jobId: this.job.id, err: { message: (err as Error).message } }, 'heartbeat failed');
        }
      }
    } catch {
      // The run ended.
    }
  }
}

/** The one report of a run that did not complete. */
async function settle(job: ClaimedJobView, deps: RemoteRunDeps, reason: unknown): Promise<void> {
  const { log } = deps;
  const meta = { jobId: job.id, model: job.model, attempt: job.attempt };
  if (reason instanceof RemoteRunStopped && reason.why !== 'shutdown') {
    // The server decided the job's fate (cancel, delete, timeout, another worker's lease): nothing to send.
    log.info({ ...meta, why: reason.why }, 'job run stopped by the server');
    return;
  }
  let report: Omit<FailRequestBody, 'lease_id'>;
  if (reason instanceof RemoteRunStopped) {
    report = { code: 'engine_failed', message: SHUTDOWN_MESSAGE, retryable: true };
    log.info(meta, 'job handed back at shutdown');
  } else if (reason instanceof RetryableEngineError) {
    report = { code: 'engine_failed', message: ENGINE_FAILED_MESSAGE, retryable: true };
    log.warn({ ...meta, err: errorDetail(reason) }, 'engine failed this attempt; handing the job back');
  } else if (reason instanceof ServerUnreachable || (!(reason instanceof EngineError) && infraFault(reason))) {
    // This machine's disk or network, not the job: another attempt may well succeed.
    report = { code: 'engine_failed', message: reason instanceof ServerUnreachable ? UNREACHABLE_MESSAGE : ENGINE_FAILED_MESSAGE, retryable: true };
    log.error({ ...meta, err: errorDetail(reason) }, 'job run failed on this worker; handing it back');
  } else {
    const error = clientJobError(reason);
    if (error.code === 'engine_failed') log.error({ ...meta, err: errorDetail(reason) }, 'engine failed');
    const code = WORKER_FAIL_CODES.find((c) => c === error.code) ?? 'engine_failed';
    report = { code, message: error.message.slice(0, FAIL_MESSAGE_MAX), retryable: false };
  }
  try {
    const answer = await deps.client.fail(job.id, { lease_id: job.lease_id, ...report });
    log.info({ ...meta, code: report.code, status: answer.status }, 'job failure reported');
  } catch (err) {
    // A 409: the job was no longer ours. Anything else: the lease runs out and the server requeues it.
    log.warn({ ...meta, err: { message: (err as Error).message } }, 'could not report the job failure');
  }
}
