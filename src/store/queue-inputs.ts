import type { HolderMove, MoveName } from '../domain/states.js';
import type { Micros } from '../lib/time.js';

/** What the queue's claim, move and overdue queries take (QueueStore, queue-store.ts). */

export interface NewClaim {
  readonly leaseId: string;
  readonly leaseExpiresAt: Micros;
  /** Used only if the job has no output key yet (its first claim). */
  readonly outputKey: string;
  readonly now: Micros;
  /**
   * Which job types this claimer runs: `only` these (a remote worker's models), or all `except`
   * these (an in-process worker leaves remote-bound models to remote workers). Absent: any.
   */
  readonly types?: ClaimTypes;
  /** Only a job that has been `queued` since at most this instant (its last status change): sandbox mode's dwell. */
  readonly queuedBefore?: Micros;
}

/** A claim of up to `leases.length` jobs in one statement: the n-th oldest claimable job gets the n-th lease. */
export interface NewClaims extends Omit<NewClaim, 'leaseId' | 'outputKey'> {
  readonly leases: readonly { readonly leaseId: string; readonly outputKey: string }[];
}

/** One job type's cutoff for `QueueStore.overdueJobs`: now minus its model's timeout. */
export interface OverdueCutoff {
  readonly type: string;
  readonly before: Micros;
}

/** A claim's filter on job types (NewClaim.types). */
export type ClaimTypes = { readonly only: readonly string[] } | { readonly except: readonly string[] };

/**
 * What a move writes besides the status. Absent fields are left as they are. What follows from the
 * move itself the store writes unasked: leaving a running status ends the lease; reaching a
 * terminal status sets `completed_at` and erases a zero-data-retention job's request body.
 */
export interface JobPatch {
  readonly result?: Readonly<Record<string, unknown>> | null;
  readonly error?: Readonly<{ code: string; message?: string }> | null;
  /** A move into a terminal status: the completion time, when not `now` (a charge fixes it). */
  readonly completedAt?: Micros;
  /** `requeue` for an infrastructure fault: not claimable before this instant, and counted. */
  readonly faultRetryAt?: Micros;
  /**
   * `requeue` of a run its worker gave up on purpose (a graceful shutdown): the claim being ended
   * does not count as an attempt, so rolling restarts never add up to `worker_lost`.
   */
  readonly uncountAttempt?: true;
}

/** A named move of one job; the guard statuses are `MOVES[name].from`, never the caller's. */
export type JobMove<N extends MoveName> = {
  readonly id: string;
  readonly patch?: JobPatch;
  readonly now: Micros;
  /** Also require the job's last status change (updated_at) at or before this instant: it has not moved since it was read. */
  readonly unchangedSince?: Micros;
} & (N extends HolderMove
  ? { /** The worker's lease: the move also requires it. */ readonly leaseId: string }
  : { readonly leaseId?: undefined });
