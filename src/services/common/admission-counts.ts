import type { Micros } from '../../lib/time.js';
import type { AdmissionCounts, LockedWorkspace, StoreTx, WorkspaceLimits } from '../../store/store.js';
import type { JobStatus } from '../../domain/states.js';

/**
 * Per-workspace concurrency: at most `max_concurrent_jobs` admitted (queued or running) jobs, then
 * up to `max_backlogged_jobs` waiting as `backlogged`. Everything here takes the workspace's lock
 * (`LockedWorkspace`), so concurrent requests and finishing jobs of one workspace are counted one
 * at a time.
 */

/** Where the next job of a workspace holding `counts` goes: a slot, the backlog, or nowhere (full). */
export function admissionStatus(limits: WorkspaceLimits, counts: AdmissionCounts): JobStatus | undefined {
  if (counts.active < limits.maxConcurrentJobs) return 'queued';
  return counts.backlogged < limits.maxBackloggedJobs ? 'backlogged' : undefined;
}

/**
 * Moves the oldest backlogged jobs into free slots. Returns how many moved and the workspace's
 * counts afterwards; a free slot left means the backlog is empty.
 */
export async function fillSlots(tx: StoreTx, lock: LockedWorkspace, now: Micros): Promise<AdmissionCounts & { moved: number }> {
  const counts = await tx.queue.admissionCounts(lock.workspaceId);
  const free = Math.min(lock.maxConcurrentJobs - counts.active, counts.backlogged);
  if (free <= 0) return { ...counts, moved: 0 };
  let moved = 0;
  for (const id of await tx.queue.oldestBacklogged(lock.workspaceId, free)) {
    if (await tx.queue.move('promote', { id, now })) moved++;
  }
  if (moved > 0) await tx.queue.notify({ kind: 'queued' });
  return { active: counts.active + moved, backlogged: counts.backlogged - moved, moved };
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
