import { RUNNING_STATUSES } from '../../domain/states.js';
import type { JobRecord } from '../../store/store.js';
import type { EndedJob } from './job-end.js';

/**
 * What a run's move did to its job, typed, so that no runner reads the job back to learn it. A
 * refused move says why from the row as the refusing transaction saw it (JobLost carries it), the
 * same words the worker protocol's 409 uses (services/remote/remote-constants.ts `STOP_REASONS`).
 */

/** Why a run no longer holds its job. `lease_lost`: requeued, reclaimed by another run, or failed by someone else. */
export type LostWhy = 'cancelled' | 'completed' | 'deleted' | 'lease_lost' | 'timeout';

/**
 * The move was refused: the job is not this run's any more. `outputsGo`: it was cancelled or
 * deleted, so what the run stored goes too; otherwise its key is another run's or a finished job's.
 */
export interface Lost {
  readonly kind: 'lost';
  readonly why: LostWhy;
  readonly outputsGo: boolean;
}

/** The run still holds the job (a heartbeat, an upstream save). */
export interface Held {
  readonly kind: 'held';
}

/** A stage move made: the job as it is now. */
export interface Moved {
  readonly kind: 'moved';
  readonly job: JobRecord;
}

/**
 * The run still holds the job but its status is not the one the move left from: another call of
 * the same worker moved it meanwhile (a remote worker's progress and complete racing).
 */
export interface Stale {
  readonly kind: 'stale';
  readonly job: JobRecord;
}

/** The job ended (completed or failed). `outputsGo`: failed, so its files are never served. */
export interface Ended {
  readonly kind: 'ended';
  readonly job: EndedJob;
  readonly outputsGo: boolean;
}

/** The job is back in the queue; its files stay with its key for the next claim. `retryInMs`: after a fault, when it may be claimed. */
export interface Requeued {
  readonly kind: 'requeued';
  readonly retryInMs?: number;
}

export const HELD: Held = Object.freeze({ kind: 'held' });

/** Why a job is not (or no longer) held by any run of it, from the job as it is: the one rule. */
export function lostWhy(job: JobRecord | undefined): LostWhy {
  if (!job) return 'deleted';
  if (job.status === 'cancelled') return 'cancelled';
  if (job.status === 'completed') return 'completed';
  if (job.status === 'failed' && job.error?.code === 'timeout') return 'timeout';
  return 'lease_lost';
}

export function lost(why: LostWhy): Lost {
  return { kind: 'lost', why, outputsGo: why === 'cancelled' || why === 'deleted' };
}

/** A refused move of the run holding `leaseId`, from the row the refusing transaction saw. */
export function refused(now: JobRecord | undefined, leaseId: string): Lost | Stale {
  if (now && now.leaseId === leaseId && RUNNING_STATUSES.includes(now.status)) return { kind: 'stale', job: now };
  return lost(lostWhy(now));
}
