import type { Clock } from '../lib/clock.js';
import { describeFault, faultRetryDelayMs } from '../lib/infra-fault.js';
import type { InfraFault } from '../lib/infra-fault.js';
import { newId } from '../lib/ids.js';
import { msToMicros } from '../lib/time.js';
import type { Micros } from '../lib/time.js';
import { newOutputKey } from '../outputs/output-store.js';
import type { JobPatch, JobRecord, Store } from '../store/store.js';
import { fillSlots, promote } from './admission.js';
import type { BillingService } from './billing.js';
import type { WebhookService } from './webhooks.js';
import { RUNNING_STATUSES, assertTransition } from './states.js';
import type { JobStatus } from './states.js';

/** A job a worker holds: its lease id and output key are set. */
export type ClaimedJob = JobRecord & { readonly leaseId: string; readonly outputKey: string; readonly startedAt: Micros };

export interface JobError {
  readonly code: string;
  readonly message: string;
}

/** Thrown to roll back the end of a job its worker no longer holds. */
const LOST = Symbol('job lost');

export interface RunPolicy {
  /** How long a claim lasts without a heartbeat. */
  readonly leaseMs: number;
  /** Claims after which a job whose worker keeps disappearing fails with `worker_lost`. */
  readonly maxAttempts: number;
  /** Infrastructure-fault hand-backs a job gets; the next fault fails it with `server_unavailable`. */
  readonly maxFaultRetries: number;
  /** A model's timeout, counted from the job's first claim. */
  timeoutMs(model: string): number;
}

/**
 * The job runner's side of the state machine. Every move is checked against the transition table
 * and written as one guarded UPDATE that also requires the worker's lease, so a worker that lost
 * its job (cancelled, reaped, deleted) can never move it again. A job's end, and the promotion of
 * the workspace's next backlogged job, commit in one transaction.
 */
export class JobRuns {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #billing: BillingService;
  readonly #webhooks: WebhookService;
  readonly policy: RunPolicy;

  constructor(store: Store, clock: Clock, policy: RunPolicy, billing: BillingService, webhooks: WebhookService) {
    this.#store = store;
    this.#clock = clock;
    this.policy = policy;
    this.#billing = billing;
    this.#webhooks = webhooks;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  /** The job's deadline: its first claim plus its model's timeout. */
  deadline(job: ClaimedJob): Micros {
    return job.startedAt + this.policy.timeoutMs(job.type) * 1000;
  }

  async claim(): Promise<ClaimedJob | undefined> {
    const now = this.#now();
    const job = await this.#store.queue.claim({
      leaseId: newId(),
      leaseExpiresAt: now + this.policy.leaseMs * 1000,
      outputKey: newOutputKey(),
      now,
    });
    return job as ClaimedJob | undefined;
  }

  heartbeat(job: ClaimedJob): Promise<boolean> {
    return this.#store.queue.extendLease(job.id, job.leaseId, this.#now() + this.policy.leaseMs * 1000);
  }

  /** Moves a running job one step; undefined when the worker no longer holds it. */
  async advance(job: ClaimedJob, from: JobStatus, to: JobStatus, patch?: JobPatch): Promise<JobRecord | undefined> {
    assertTransition(from, to);
    return this.#store.queue.moveJob({ id: job.id, from: [from], to, leaseId: job.leaseId, patch, now: this.#now() });
  }

  complete(job: ClaimedJob, from: JobStatus, result: Readonly<Record<string, unknown>>): Promise<JobRecord | undefined> {
    assertTransition(from, 'completed');
    return this.#end(job, [from], 'completed', { result, error: null });
  }

  /** Fails the job from whatever running status it is in. */
  fail(job: ClaimedJob, error: JobError): Promise<JobRecord | undefined> {
    return this.#end(job, RUNNING_STATUSES, 'failed', { result: null, error });
  }

  /** Returns a job to the queue (its worker is stopping); its preview, if any, is gone with it. */
  async handBack(job: ClaimedJob): Promise<boolean> {
    for (const f of RUNNING_STATUSES) assertTransition(f, 'queued');
    const moved = await this.#store.transaction(async (tx) => {
      const back = await tx.queue.moveJob({
        id: job.id,
        from: RUNNING_STATUSES,
        to: 'queued',
        leaseId: job.leaseId,
        patch: { result: null, clearLease: true },
        now: this.#now(),
      });
      if (back) await tx.queue.notify({ kind: 'queued' });
      return back;
    });
    return moved !== undefined;
  }

  /**
   * An infrastructure fault stopped the run: the job goes back to the queue, unbilled (its hold
   * stays), not to be claimed before its backoff ends. Past its allowance of faults, or when the
   * wait would outlast its timeout, it fails with `server_unavailable` and its hold is released.
   * Undefined when the worker no longer holds the job.
   */
  async handBackForFault(job: ClaimedJob, fault: InfraFault): Promise<{ retryInMs: number } | { failed: JobRecord } | undefined> {
    const faults = job.faultCount + 1;
    const retryInMs = faultRetryDelayMs(faults);
    const now = this.#now();
    if (faults > this.policy.maxFaultRetries || now + retryInMs * 1000 >= this.deadline(job)) {
      const failed = await this.fail(job, serverUnavailableError(fault));
      return failed && { failed };
    }
    for (const f of RUNNING_STATUSES) assertTransition(f, 'queued');
    const back = await this.#store.queue.moveJob({
      id: job.id,
      from: RUNNING_STATUSES,
      to: 'queued',
      leaseId: job.leaseId,
      patch: { result: null, clearLease: true, faultRetryAt: now + retryInMs * 1000 },
      now,
    });
    // No wake-up: nobody may claim it before its backoff ends; the workers' poll finds it then.
    return back && { retryInMs };
  }

  /** The job as it is now, whoever holds it. */
  find(id: string): Promise<JobRecord | undefined> {
    return this.#store.queue.findJob(id);
  }

  /**
   * Returns jobs whose worker stopped heartbeating to the queue, or fails them when they are past
   * their timeout or have used up their attempts. Returns how many it moved.
   */
  async reap(limit = 100): Promise<number> {
    const now = this.#now();
    let moved = 0;
    for (const job of await this.#store.queue.expiredLeases(now, limit)) {
      const claimed = job as ClaimedJob;
      if (now >= this.deadline(claimed)) {
        if (await this.fail(claimed, timeoutError(this.policy.timeoutMs(job.type)))) moved++;
      } else if (job.attempts - job.faultCount >= this.policy.maxAttempts) {
        // Claims that ended in a fault hand-back were not lost workers: they do not count here.
        const message = `the job's worker stopped ${job.attempts - job.faultCount} times; giving up`;
        if (await this.fail(claimed, { code: 'worker_lost', message })) moved++;
      } else if (await this.handBack(claimed)) {
        moved++;
      }
    }
    return moved;
  }

  /** Fills free slots from backlogs (a finished job does this itself; this is the backstop). */
  async promoteAll(): Promise<number> {
    let moved = 0;
    for (const workspaceId of await this.#store.queue.workspacesWithBacklog()) {
      moved += await this.#store.transaction((tx) => promote(tx, workspaceId, this.#now()));
    }
    return moved;
  }

  async #end(job: ClaimedJob, from: readonly JobStatus[], to: JobStatus, patch: JobPatch): Promise<JobRecord | undefined> {
    for (const f of from) assertTransition(f, to);
    const now = this.#now();
    return this.#store
      .transaction(async (tx) => {
        // Workspace row first, then balance and job rows: the order every transaction takes.
        const limits = await tx.queue.lockWorkspace(job.workspaceId);
        // The charge comes first because it fixes the completion time: charges are strictly
        // ordered per workspace, so the usage report's cursor is exact.
        const entry = await this.#billing.settle(tx, job.id, to, now);
        const completedAt = to === 'completed' && entry ? entry.at : now;
        const ended = await tx.queue.moveJob({
          id: job.id,
          from,
          to,
          leaseId: job.leaseId,
          patch: { ...patch, completedAt, clearLease: true, eraseRequest: job.zeroDataRetention },
          now,
        });
        // The worker lost the job (cancelled, reaped): undo the ledger entry with the transaction.
        if (!ended) throw LOST;
        await this.#webhooks.enqueue(tx, ended, now);
        if (limits) await fillSlots(tx, job.workspaceId, limits, now);
        return ended;
      })
      .catch((err: unknown) => {
        if (err === LOST) return undefined;
        throw err;
      });
  }
}

/** The job's end after infrastructure faults: the server's fault, and the client was not billed. */
export function serverUnavailableError(fault: InfraFault): JobError {
  return {
    code: 'server_unavailable',
    message: `the server could not run the job because ${describeFault(fault.kind)}; you were not billed, submit it again later`,
  };
}

export function timeoutError(timeoutMs: number): JobError {
  return { code: 'timeout', message: `the job ran longer than its model's timeout of ${Math.round(timeoutMs / 1000)} s` };
}
