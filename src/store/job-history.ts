import type { JobStatus } from '../domain/states.js';
import type { Micros } from '../lib/time.js';

/** One status a job took (table `job_transitions`, written by triggers with each status change). */
export interface JobTransition {
  /** Increasing with every row of every job: a job's rows are in order, and an SSE event id. */
  readonly id: number;
  readonly status: JobStatus;
  /** The job's `updated_at` of that change. */
  readonly at: Micros;
}

/**
 * A job and its transitions after a given id, read in one statement, so they agree: the last
 * transition (when there is one) is the job's current status.
 */
export interface JobHistory<J> {
  /** The job as the API shows it (JobSummary). */
  readonly job: J;
  /** Oldest first, at most the limit asked for; empty when nothing followed the given id. */
  readonly transitions: readonly JobTransition[];
}
