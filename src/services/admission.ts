import type { Micros } from '../lib/time.js';
import type { StoreTx } from '../store/store.js';
import { ACTIVE_STATUSES } from './states.js';
import type { JobStatus } from './states.js';

/**
 * Per-workspace concurrency: at most `max_concurrent_jobs` admitted (queued or running) jobs, then
 * up to `max_backlogged_jobs` waiting as `backlogged`. Both functions run inside the caller's
 * transaction and lock the workspace row first, so concurrent requests and finishing jobs of one
 * workspace are counted one at a time.
 */

/** The status a new job starts in, or undefined when the workspace is full. */
export async function admit(tx: StoreTx, workspaceId: string, now: Micros): Promise<JobStatus | undefined> {
  // Older backlogged jobs take any free slot first, so promotion stays in creation order.
  await promote(tx, workspaceId, now);
  const limits = await tx.queue.lockWorkspace(workspaceId);
  if (!limits) return undefined;
  if ((await tx.queue.countJobs(workspaceId, ACTIVE_STATUSES, limits.maxConcurrentJobs)) < limits.maxConcurrentJobs) return 'queued';
  const backlogged = await tx.queue.countJobs(workspaceId, ['backlogged'], limits.maxBackloggedJobs);
  return backlogged < limits.maxBackloggedJobs ? 'backlogged' : undefined;
}

/** Moves the oldest backlogged jobs into free slots; returns how many moved. */
export async function promote(tx: StoreTx, workspaceId: string, now: Micros): Promise<number> {
  const limits = await tx.queue.lockWorkspace(workspaceId);
  if (!limits) return 0;
  const free = limits.maxConcurrentJobs - (await tx.queue.countJobs(workspaceId, ACTIVE_STATUSES, limits.maxConcurrentJobs));
  if (free <= 0) return 0;
  let moved = 0;
  for (const id of await tx.queue.oldestBacklogged(workspaceId, free)) {
    if (await tx.queue.moveJob({ id, from: ['backlogged'], to: 'queued', now })) moved++;
  }
  if (moved > 0) await tx.queue.notify({ kind: 'queued' });
  return moved;
}
