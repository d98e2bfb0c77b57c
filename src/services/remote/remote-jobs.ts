import { DomainError, forbidden, notFound } from '../../domain/error-catalogue.js';
import { RUNNING_STATUSES } from '../../domain/states.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { Log } from '../../lib/log.js';
import { msToMicros } from '../../lib/time.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { JobRecord } from '../../store/store.js';
import { timeoutError } from '../jobs/job-runs.js';
import { lostWhy } from '../jobs/run-outcomes.js';
import type { ClaimedJob, JobError, JobRuns } from '../jobs/job-runs.js';
import { removeOrLeaveToJanitor } from '../common/removal.js';
import type { StopReason } from './remote-constants.js';
import { matchesModel } from './remote-tokens.js';
import type { WorkerPrincipal } from './remote-tokens.js';

/**
 * What the worker protocol's use cases share (docs/workers.md): which jobs a worker token may
 * touch, the job a call names as the worker holds it, and why a worker must stop. Every state move
 * goes through JobRuns, so guards, leases, billing and webhooks are those of in-process runs.
 */

const STOP_WORDS: Readonly<Record<StopReason, string>> = {
  cancelled: 'the job was cancelled',
  completed: 'the job has completed: by this claim (a repeated complete), or by another after this claim\'s lease ran out',
  deleted: 'the job no longer exists',
  lease_lost: 'this worker no longer holds the job: its lease ran out, or the job was given to another worker or has failed',
  timeout: "the job passed its deadline and failed with 'timeout'",
};

/** The 409 telling a worker to stop, with its reason. */
export function mustStop(reason: StopReason): DomainError {
  return new DomainError('worker_conflict', `${STOP_WORDS[reason]}; stop working on it`, { fields: { reason } });
}

/** Why a worker that sent a lease no longer holds the job, read from the job as it is now (the runs' one rule). */
export function stopReasonOf(job: JobRecord | undefined): StopReason {
  return lostWhy(job);
}

/** What the protocol's use cases are built from. */
export interface RemoteDeps {
  readonly runs: JobRuns;
  /** Remote-bound models: path -> pool (services.bindings.remote). */
  readonly remote: ReadonlyMap<string, string>;
  readonly outputs: OutputStore;
  readonly clock: Clock;
  readonly log: Log;
}

/**
 * The fields naming a job on every log line about it: its id, and the request that created it
 * (`jobRequestId`; the line's own `requestId` is the worker call's, from the request's logger).
 */
export function jobFields(job: Pick<JobRecord, 'id' | 'requestId'>): { jobId: string; jobRequestId: string | undefined } {
  return { jobId: job.id, jobRequestId: job.requestId ?? undefined };
}

/** Refuses (403) a job type the worker may not touch: not remote-bound, or not named by its token. */
export function assertMayWork(remote: ReadonlyMap<string, string>, worker: WorkerPrincipal, type: string): void {
  if (!remote.has(type)) throw forbidden(`jobs of ${type} are not run by remote workers on this server`);
  if (!matchesModel(worker.models, type)) throw forbidden(`this worker token may not work on ${type}; its models are ${worker.models.join(', ')}`);
}

/** What a claim asks for beyond its token: its `models` patterns and its `pool`. */
export interface ClaimScope {
  readonly models?: readonly string[];
  readonly pool?: string;
}

/**
 * The remote-bound models a claim takes: of its pool (if given), named by its patterns (if given)
 * and by its token's. A claim's patterns narrow its token's, never widen them: models they name
 * that the token does not are left out. Refused (403), since it could never take anything: a
 * claim of a pool no model is bound to (a typo: pools come from the config), and one whose
 * patterns name remote-bound models of which the token names none. A claim that otherwise takes
 * no model gets `idle`, why (for the log: the server's config may yet change).
 */
export function claimTypes(remote: ReadonlyMap<string, string>, worker: WorkerPrincipal, scope: ClaimScope): { types: string[]; idle?: string } {
  const pools = [...new Set(remote.values())].sort();
  if (scope.pool !== undefined && !pools.includes(scope.pool)) {
    throw forbidden(
      pools.length === 0
        ? `no model is bound to remote:${scope.pool}; this server binds no model to a remote pool`
        : `no model is bound to remote:${scope.pool}; the pools of this server are ${pools.join(', ')}`,
    );
  }
  const asked = scope.models !== undefined && scope.models.length > 0;
  const named = [...remote].filter(([model, pool]) => (scope.pool === undefined || pool === scope.pool) && (!asked || matchesModel(scope.models!, model)));
  const types = named.filter(([model]) => matchesModel(worker.models, model)).map(([model]) => model);
  if (types.length > 0) return { types };
  if (asked && named.length > 0) {
    throw forbidden(`this worker token may work on none of the models the claim names (${named.map(([m]) => m).join(', ')}); its models are ${worker.models.join(', ')}`);
  }
  const bound = scope.pool === undefined ? 'a remote pool' : `remote:${scope.pool}`;
  if (remote.size === 0) return { types, idle: 'this server binds no model to a remote pool' };
  if (asked) return { types, idle: `the claim's models (${scope.models!.join(', ')}) match no model bound to ${bound}` };
  return { types, idle: `its token's models (${worker.models.join(', ')}) match no model bound to ${bound}` };
}

/** The job a worker's call is about, as it holds it; throws the 403, 404 or 409 the call answers. */
export class HeldJobs {
  readonly #deps: RemoteDeps;

  constructor(deps: RemoteDeps) {
    this.#deps = deps;
  }

  #nowUs(): number {
    return msToMicros(this.#deps.clock.nowMs());
  }

  /** The job as it is now; 404 for an id that is no job id, 409 `deleted` for one that is gone. */
  async find(worker: WorkerPrincipal, jobId: string): Promise<JobRecord> {
    if (!isUuid(jobId)) throw notFound(`job '${jobId.slice(0, 100)}' not found`);
    const job = await this.#deps.runs.find(jobId.toLowerCase());
    if (!job) throw mustStop('deleted');
    assertMayWork(this.#deps.remote, worker, job.type);
    return job;
  }

  /**
   * The job as the worker holding `leaseId` holds it. A job past its deadline is failed with
   * `timeout` here, and the worker told to stop. `log`: the worker call's logger.
   */
  async held(worker: WorkerPrincipal, jobId: string, leaseId: string, log: Log = this.#deps.log): Promise<ClaimedJob> {
    const job = await this.find(worker, jobId);
    if (job.leaseId !== leaseId || !RUNNING_STATUSES.includes(job.status) || job.outputKey === null || job.startedAt === null) {
      throw mustStop(stopReasonOf(job));
    }
    const claimed = job as ClaimedJob;
    if (this.#nowUs() >= this.#deps.runs.deadline(claimed)) {
      await this.timeOut(claimed, log);
      throw mustStop('timeout');
    }
    return claimed;
  }

  /** After a refused move: the 409 for the job as it is now. */
  async lost(jobId: string): Promise<DomainError> {
    return mustStop(stopReasonOf(await this.#deps.runs.find(jobId)));
  }

  /** Fails a held job past its deadline; its files go (a failed job's are never served). */
  async timeOut(job: ClaimedJob, log: Log = this.#deps.log): Promise<boolean> {
    return this.failHeld(job, timeoutError(this.#deps.runs.policy.timeoutMs(job.type, job.request)), log);
  }

  /** Fails a held job and removes its files; false when it was no longer held. */
  async failHeld(job: ClaimedJob, error: JobError, log: Log = this.#deps.log): Promise<boolean> {
    if ((await this.#deps.runs.fail(job, error)).kind === 'lost') return false;
    log.info({ ...jobFields(job), model: job.type, attempt: job.attempts, code: error.code }, 'remote job failed');
    await removeOrLeaveToJanitor(this.#deps.outputs, job.outputKey, log, jobFields(job), "a failed remote job's outputs");
    return true;
  }
}
