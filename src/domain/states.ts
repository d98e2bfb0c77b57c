/**
 * Job statuses of spec section 3 and the one table of moves between them. Every status write in
 * the store is guarded by the status it expects (`WHERE status = ?`); the services ask this table
 * before they write, so an illegal move is refused before it reaches SQL.
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

export const TERMINAL_STATUSES: readonly JobStatus[] = Object.freeze(['completed', 'failed', 'cancelled']);

/** Statuses that hold one of the workspace's concurrency slots: admitted and not yet ended. */
export const ACTIVE_STATUSES: readonly JobStatus[] = Object.freeze([
  'queued',
  'scheduled',
  'processing',
  'sampling',
  'intermediate-complete',
]);

/** Statuses of a job a worker holds a lease on. */
export const RUNNING_STATUSES: readonly JobStatus[] = Object.freeze([
  'scheduled',
  'processing',
  'sampling',
  'intermediate-complete',
]);

export const NON_TERMINAL_STATUSES: readonly JobStatus[] = Object.freeze(['backlogged', ...ACTIVE_STATUSES]);

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * Every legal move. Running statuses may go back to `queued`: a worker that stops hands its jobs
 * back, and the reaper returns jobs whose lease expired. `failed` and `cancelled` are reachable
 * from every non-terminal status; `sampling` may complete directly for engines without a preview.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = Object.freeze({
  backlogged: ['queued', 'failed', 'cancelled'],
  queued: ['scheduled', 'failed', 'cancelled'],
  scheduled: ['processing', 'queued', 'failed', 'cancelled'],
  processing: ['sampling', 'queued', 'failed', 'cancelled'],
  sampling: ['intermediate-complete', 'completed', 'queued', 'failed', 'cancelled'],
  'intermediate-complete': ['completed', 'queued', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
});

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses a job may be in to move to `to`: the guard of a write from "wherever it is". */
export function predecessorsOf(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}

export class IllegalTransitionError extends Error {
  constructor(from: string, to: string) {
    super(`illegal job status transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

export function assertTransition(from: JobStatus, to: JobStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}
