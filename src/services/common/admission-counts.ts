import type { Micros } from '../../lib/time.js';
import type { LockedWorkspace, StoreTx } from '../../store/store.js';
import { ACTIVE_STATUSES } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';

/**
 * Per-workspace concurrency: at most `max_concurrent_jobs` admitted (queued or running) jobs, then
 * up to `max_backlogged_jobs` waiting as `backlogged`. Everything here takes the workspace's lock
 * (`LockedWorkspace`), so concurrent requests and finishing jobs of one workspace are counted one
 * at a time.
 */

/** The status a new job starts in, or undefined when the workspace is full. */
export async function admit(tx: StoreTx, lock: LockedWorkspace, now: Micros): Promise<JobStatus | undefined> {
  // Older backlogged jobs take any free slot first, so promotion stays in creation order.
  const { admitted } = await fillSlots(tx, lock, now);
  if (admitted < lock.maxConcurrentJobs) return 'queued';
  const backlogged = await tx.queue.countJobs(lock.workspaceId, ['backlogged'], lock.maxBackloggedJobs);
  return backlogged < lock.maxBackloggedJobs ? 'backlogged' : undefined;
}

/**
 * Moves the oldest backlogged jobs into free slots. Returns how many moved and how many jobs are
 * admitted afterwards; fewer than the limit means the backlog is empty.
 */
export async function fillSlots(tx: StoreTx, lock: LockedWorkspace, now: Micros): Promise<{ moved: number; admitted: number }> {
  const active = await tx.queue.countJobs(lock.workspaceId, ACTIVE_STATUSES, lock.maxConcurrentJobs);
  const free = lock.maxConcurrentJobs - active;
  if (free <= 0) return { moved: 0, admitted: active };
  let moved = 0;
  for (const id of await tx.queue.oldestBacklogged(lock.workspaceId, free)) {
    if (await tx.queue.move('promote', { id, now })) moved++;
  }
  if (moved > 0) await tx.queue.notify({ kind: 'queued' });
  return { moved, admitted: active + moved };
}

/** Locks the workspace of a job or caller that exists: its row is gone only if the store is corrupt. */
export async function lockExisting(tx: StoreTx, workspaceId: string): Promise<LockedWorkspace> {
  const lock = await tx.queue.lockWorkspace(workspaceId);
  if (!lock) throw new Error(`workspace ${workspaceId} vanished`);
  return lock;
}

/** Locks the workspace and moves the oldest backlogged jobs into free slots; returns how many moved. */
export async function promote(tx: StoreTx, workspaceId: string, now: Micros): Promise<number> {
  const lock = await tx.queue.lockWorkspace(workspaceId);
  return lock ? (await fillSlots(tx, lock, now)).moved : 0;
}
