/** A workspace's admission limits, read with its lock. */
export interface WorkspaceLimits {
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
}

declare const locked: unique symbol;

/**
 * Proof that the current transaction holds the workspace's row lock, and the limits read with it.
 * Only `QueueStore.lockWorkspace` hands one out, so whatever takes one as an argument (admission,
 * filling slots, the billing hold and settle, a job's end) cannot be called before the lock.
 *
 * Lock order: every transaction that counts or frees a workspace's slots, or moves its money,
 * locks the workspace row before any balance or job row. On PostgreSQL such transactions then
 * queue up on that one row instead of deadlocking on each other's job rows; on SQLite the write
 * transaction is serial anyway. A lock is valid only inside the transaction that took it.
 */
export interface LockedWorkspace extends WorkspaceLimits {
  readonly workspaceId: string;
  readonly [locked]: true;
}

/**
 * For the store's `lockWorkspace` implementations only, once the lock is held (eslint refuses
 * this import anywhere else).
 */
export function sealLock(workspaceId: string, limits: WorkspaceLimits): LockedWorkspace {
  return Object.freeze({ workspaceId, ...limits }) as LockedWorkspace;
}
