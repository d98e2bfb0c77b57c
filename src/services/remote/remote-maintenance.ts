import { PeriodicTask } from '../../lib/periodic-task.js';
import { msToMicros } from '../../lib/time.js';
import { RUNNING_STATUSES } from '../../domain/states.js';
import type { QueueStore } from '../../store/store.js';
import { timeoutError } from '../jobs/job-runs.js';
import type { ClaimedJob, JobError } from '../jobs/job-runs.js';
import { removeOrLeaveToJanitor } from '../common/removal.js';
import { HeldJobs, jobFields } from './remote-jobs.js';
import { UNSERVED_WARN_MS } from './remote-tokens.js';
import type { WorkerTokenService } from './remote-tokens.js';
import type { RemoteDeps } from './remote-jobs.js';

/** Jobs looked at per pass; more wait for the next. */
const BATCH = 100;

export interface MaintenanceReport {
  /** Expired leases requeued or failed (JobRuns.reap). */
  readonly reaped: number;
  /** Running remote-bound jobs past their deadline, failed with `timeout`. */
  readonly timedOut: number;
  /** Queued remote-bound jobs no worker took within their model's timeout, failed with `timeout`. */
  readonly expired: number;
  /** Presence rows of workers not seen for a week, deleted (at most once an hour). */
  readonly pruned: number;
}

/** The `timeout` of a queued job no remote worker took. */
export function untakenError(timeoutMs: number): JobError {
  return {
    code: 'timeout',
    message: `no worker took the job within its model's timeout of ${Math.round(timeoutMs / 1000)} s; submit it again later`,
  };
}

/**
 * Lease and timeout upkeep for jobs of remote-bound models, run by every process that serves the
 * API (so remote jobs are kept whichever processes run; an `api` process has no in-process worker
 * to reap them): expired leases are reaped as an in-process worker's poll does (requeued, or failed with
 * `timeout` or `worker_lost`), running jobs past their deadline fail with `timeout`, and so do
 * queued ones that no worker took within their model's timeout. Every change is a guarded move
 * through JobRuns, so several processes may do this at once. Waits on the injected clock.
 */
export class RemoteMaintenance {
  readonly #deps: RemoteDeps;
  readonly #queue: Pick<QueueStore, 'overdueJobs'>;
  readonly #held: HeldJobs;
  readonly #presence: Pick<WorkerTokenService, 'unserved' | 'prunePresence'> | undefined;
  #lookedMs: number | undefined;
  readonly #task: PeriodicTask;

  /** `presence`: the remote workers' presence, to warn about models no live worker can claim and to prune. */
  constructor(deps: RemoteDeps, queue: Pick<QueueStore, 'overdueJobs'>, intervalMs: number, presence?: Pick<WorkerTokenService, 'unserved' | 'prunePresence'>) {
    this.#deps = deps;
    this.#queue = queue;
    this.#held = new HeldJobs(deps);
    this.#presence = presence;
    this.#task = new PeriodicTask(() => this.#passAndLog(), { intervalMs, clock: deps.clock, log: deps.log, failureMessage: 'remote job maintenance failed' });
  }

  /** A pass now, then one every interval, until stop(); nothing when no model is remote-bound. */
  start(): void {
    if (this.#deps.remote.size === 0) return;
    this.#task.start();
  }

  async stop(): Promise<void> {
    await this.#task.stop();
  }

  /** One pass. */
  async pass(): Promise<MaintenanceReport> {
    const { runs, remote, clock, log } = this.#deps;
    // One line per job moved, naming it and the request that created it.
    const reaped = await runs.reap(BATCH, (job, error) =>
      log.info({ ...jobFields(job), model: job.type, attempt: job.attempts, ...(error ? { code: error.code } : {}) }, error ? 'remote job failed: its lease lapsed' : 'remote job requeued: its lease lapsed'),
    );
    const nowMs = clock.nowMs();
    const cutoffs = [...remote.keys()].map((type) => ({ type, before: msToMicros(nowMs - runs.policy.timeoutMs(type)) }));
    let timedOut = 0;
    let expired = 0;
    for (const job of await this.#queue.overdueJobs(cutoffs, BATCH)) {
      const timeoutMs = runs.policy.timeoutMs(job.type, job.request);
      if (RUNNING_STATUSES.includes(job.status)) {
        // Logged ('remote job failed', with its code) by timeOut.
        if (await this.#held.timeOut(job as ClaimedJob)) timedOut++;
      } else if (job.status === 'queued') {
        // Claimed before and handed back: it ran out of time (its first claim never changes). Never
        // claimed: nobody took it, unless it was claimed (and requeued) since it was read, which
        // its last status change, still before the cutoff, rules out.
        const untaken = job.startedAt === null;
        const before = msToMicros(nowMs - timeoutMs);
        if (!(await runs.expire(job, untaken ? untakenError(timeoutMs) : timeoutError(timeoutMs), untaken ? before : undefined))) continue;
        expired++;
        log.info({ ...jobFields(job), model: job.type, attempt: job.attempts, code: 'timeout', untaken }, 'remote job failed: it waited past its timeout');
        if (job.outputKey !== null) await removeOrLeaveToJanitor(this.#deps.outputs, job.outputKey, log, jobFields(job), "a failed remote job's outputs");
      }
    }
    await this.#warnUnserved(nowMs);
    const pruned = this.#presence ? await this.#presence.prunePresence() : 0;
    return { reaped, timedOut, expired, pruned };
  }

  /**
   * Logs the models whose queued jobs no live worker can claim (as /readyz does, and rate-limited
   * with it: once a minute per model), looking at most once a UNSERVED_WARN_MS: without a health
   * checker calling /readyz, the log still says so.
   */
  async #warnUnserved(nowMs: number): Promise<void> {
    if (!this.#presence || (this.#lookedMs !== undefined && nowMs - this.#lookedMs < UNSERVED_WARN_MS && nowMs >= this.#lookedMs)) return;
    this.#lookedMs = nowMs;
    await this.#presence.unserved(this.#deps.log);
  }

  /** The loop's tick: a pass that moved something says so; a quiet one logs nothing. */
  async #passAndLog(): Promise<void> {
    const report = await this.pass();
    if (report.reaped + report.timedOut + report.expired + report.pruned > 0) this.#deps.log.info({ ...report }, 'remote job maintenance');
  }
}
