import type { Micros } from '../lib/time.js';
import type { StoreTx, WorkspaceLimits } from '../store/store.js';
import { ACTIVE_STATUSES } from '../domain/states.js';
import type { JobStatus } from '../domain/states.js';

/**
 * Per-workspace concurrency: at most `max_concurrent_jobs` admitted (queued or running) jobs, then
 * up to `max_backlogged_jobs` waiting as `backlogged`. These run inside the caller's transaction
 * with the workspace row locked first, so concurrent requests and finishing jobs of one workspace
 * are counted one at a time.
 */

/**
 * The status a new job starts in, or undefined when the workspace is full. The caller has locked
 * the workspace row (`tx.queue.lockWorkspace`, which gave `limits`).
 */
export async function admit(tx: StoreTx, workspaceId: string, limits: WorkspaceLimits, now: Micros): Promise<JobStatus | undefined> {
  // Older backlogged jobs take any free slot first, so promotion stays in creation order.
  const { admitted } = await fillSlots(tx, workspaceId, limits, now);
  if (admitted < limits.maxConcurrentJobs) return 'queued';
  const backlogged = await tx.queue.countJobs(workspaceId, ['backlogged'], limits.maxBackloggedJobs);
  return backlogged < limits.maxBackloggedJobs ? 'backlogged' : undefined;
}

/**
 * With the workspace row already locked (by `tx.queue.lockWorkspace`, which gave `limits`): moves
 * the oldest backlogged jobs into free slots. Returns how many moved and how many jobs are
 * admitted afterwards; fewer than the limit means the backlog is empty.
 */
export async function fillSlots(
  tx: StoreTx,
  workspaceId: string,
  limits: WorkspaceLimits,
  now: Micros,
): Promise<{ moved: number; admitted: number }> {
  const active = await tx.queue.countJobs(workspaceId, ACTIVE_STATUSES, limits.maxConcurrentJobs);
  const free = limits.maxConcurrentJobs - active;
  if (free <= 0) return { moved: 0, admitted: active };
  let moved = 0;
  for (const id of await tx.queue.oldestBacklogged(workspaceId, free)) {
    if (await tx.queue.moveJob({ id, from: ['backlogged'], to: 'queued', now })) moved++;
  }
  if (moved > 0) await tx.queue.notify({ kind: 'queued' });
  return { moved, admitted: active + moved };
}

/** Locks the workspace and moves the oldest backlogged jobs into free slots; returns how many moved. */
export async function promote(tx: StoreTx, workspaceId: string, now: Micros): Promise<number> {
  const limits = await tx.queue.lockWorkspace(workspaceId);
  return limits ? (await fillSlots(tx, workspaceId, limits, now)).moved : 0;
}
