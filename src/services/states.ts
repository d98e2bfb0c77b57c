/**
 * Job statuses of spec section 3: a closed, frozen set. The terminal set and the transition table
 * that moves jobs between them belong here too, and arrive with the runner.
 */
export const JOB_STATUSES = Object.freeze([
  'backlogged',
  'queued',
  'scheduled',
  'processing',
  'sampling',
  'intermediate-complete',
  'completed',
  'failed',
  'cancelled',
] as const);

export type JobStatus = (typeof JOB_STATUSES)[number];

export function isJobStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}

/** The status a job is created in until admission control exists. */
export const INITIAL_STATUS: JobStatus = 'queued';
