import type { MoveName } from '../domain/states.js';
import type { Micros } from '../lib/time.js';
import type { Balance } from './billing-store.js';
import type { JobRecord } from './job-store.js';
import type { LockedWorkspace } from './locked-workspace.js';
import type { JobMove, NewClaim, NewClaims, OverdueCutoff } from './queue-inputs.js';

/** A workspace's jobs holding a concurrency slot (`active`) and waiting for one (`backlogged`). */
export interface AdmissionCounts {
  readonly active: number;
  readonly backlogged: number;
}

/** A workspace locked for admitting jobs, with what admission decides on, read under the lock. */
export interface AdmissionLock {
  readonly lock: LockedWorkspace;
  readonly counts: AdmissionCounts;
  /** Undefined before the workspace's first top-up. */
  readonly balance: Balance | undefined;
}

/** The moves `QueueStore.move` makes (the claim picks its job itself: `QueueStore.claim`). */
export type JobMoveName = Exclude<MoveName, 'claim'>;

/**
 * The runner's queries. Every status change is one guarded UPDATE that returns the row only if
 * the guard held, so two writers can never both move the same job.
 */
export interface QueueStore {
  /**
   * Locks the workspace row until the transaction ends; undefined when there is no such workspace.
   * The only source of a `LockedWorkspace` (see there for the lock order).
   */
  lockWorkspace(workspaceId: string): Promise<LockedWorkspace | undefined>;
  /**
   * The workspace's admitted (ACTIVE_STATUSES) and backlogged jobs: running numbers the store keeps
   * in every write that moves a job in or out of them, so reading them costs the same at any depth.
   * Current within the transaction: read them after the moves that change them.
   */
  admissionCounts(workspaceId: string): Promise<AdmissionCounts>;
  /** `lockWorkspace`, and with it the admission counts and the balance, in one statement. */
  lockForAdmission(workspaceId: string): Promise<AdmissionLock | undefined>;
  /**
   * The `claim` move: atomically takes the next queued job whose run_after (if any) has come, moving
   * it to `scheduled` under a new lease. Next: the highest workspace priority, then the workspace
   * with the fewest jobs running, then the oldest job (sql/claim-statement.ts, issue 40).
   */
  claim(claim: NewClaim): Promise<JobRecord | undefined>;
  /** The `claim` move of up to `leases.length` jobs in one statement, the ones that many single claims would take (fewer when fewer are claimable); returned oldest first. */
  claimMany(claim: NewClaims): Promise<JobRecord[]>;
  /**
   * False when the lease is gone: the job was cancelled, deleted, finished or reaped. A lease
   * exists only while its job runs: every move out of a running status clears it. `progress`, a
   * remote worker's fraction done, is stored with it (a claim starts the attempt at null).
   */
  extendLease(id: string, leaseId: string, expiresAt: Micros, progress?: number): Promise<boolean>;
  /**
   * Makes the named move (domain/states.ts `MOVES`): one UPDATE guarded by the move's `from`
   * statuses (and the lease, for a holder's move) that returns the row only if the guard held.
   */
  move<N extends JobMoveName>(name: N, move: JobMove<N>): Promise<JobRecord | undefined>;
  /** Running jobs whose lease ran out before `now`, oldest lease first. */
  expiredLeases(now: Micros, limit: number): Promise<JobRecord[]>;
  /**
   * Queued and running jobs of each cutoff's type that have outlived it: first claimed before
   * `before`, or waiting in the queue since before it (their last status change). Oldest first.
   */
  overdueJobs(cutoffs: readonly OverdueCutoff[], limit: number): Promise<JobRecord[]>;
  /** Ids of the workspace's oldest backlogged jobs, in creation order. */
  oldestBacklogged(workspaceId: string, limit: number): Promise<string[]>;
  workspacesWithBacklog(): Promise<string[]>;
  /** Any job by id, whoever owns it (the runner's view). */
  findJob(id: string): Promise<JobRecord | undefined>;
  /**
   * Announces the event when the transaction commits (nothing if it rolls back): to this
   * process's `onEvent` listeners, and to other processes where the backend can reach them
   * (PostgreSQL NOTIFY; SQLite writes it to the wake socket of each process sharing its file).
   */
  notify(event: JobEvent): Promise<void>;
}

/** What a committed change announces: to this process, and to the others sharing the store. */
export type JobEvent =
  | { readonly kind: 'queued' }
  | { readonly kind: 'cancelled'; readonly jobId: string }
  /** The job's status changed, or it was deleted: its waiters read it again. */
  | { readonly kind: 'changed'; readonly jobId: string }
  /** A webhook event was written to the outbox. */
  | { readonly kind: 'webhook' };
