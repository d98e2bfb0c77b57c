import type { Micros } from '../lib/time.js';

/** What the queue's claim and overdue queries take (QueueStore, store.ts). */

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

/** One job type's cutoff for `QueueStore.overdueJobs`: now minus its model's timeout. */
export interface OverdueCutoff {
  readonly type: string;
  readonly before: Micros;
}

/** A claim's filter on job types (NewClaim.types). */
export type ClaimTypes = { readonly only: readonly string[] } | { readonly except: readonly string[] };
