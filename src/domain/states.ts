/**
 * Job statuses of spec section 3, the one table of legal transitions between them, and the named
 * moves the code makes (`MOVES`). The store writes a status only through a named move, one guarded
 * UPDATE whose `WHERE status IN (...)` is that move's `from` here, never the caller's idea of it.
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

export type TerminalStatus = 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly TerminalStatus[] = Object.freeze(['completed', 'failed', 'cancelled'] as const);

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

export function isTerminal(status: string): status is TerminalStatus {
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

/**
 * Who may make a move: `grants` takes a new lease (the claim), `holder` requires the lease of the
 * worker running the job (so a worker that lost its job cannot touch it), `any` needs none (admission
 * and DELETE, under the workspace lock).
 */
export type LeaseRule = 'grants' | 'holder' | 'any';

export interface MoveRule {
  /** The guard: the statuses the job must be in. */
  readonly from: readonly JobStatus[];
  readonly to: JobStatus;
  readonly lease: LeaseRule;
}

/**
 * Every status change the code makes, by name. Each `from -> to` is checked against `TRANSITIONS`
 * when this module loads, and a unit test checks that every legal transition is made by some move
 * or listed in `UNUSED_TRANSITIONS`.
 */
export const MOVES = Object.freeze({
  /** A worker takes the oldest queued job (the store picks which; see `QueueStore.claim`). */
  claim: { from: ['queued'], to: 'scheduled', lease: 'grants' },
  /** Inputs fetched and checked. */
  start: { from: ['scheduled'], to: 'processing', lease: 'holder' },
  markSampling: { from: ['processing'], to: 'sampling', lease: 'holder' },
  /** A preview is written. */
  markIntermediate: { from: ['sampling'], to: 'intermediate-complete', lease: 'holder' },
  /** The output is written; engines without a preview complete from `sampling`. */
  complete: { from: ['sampling', 'intermediate-complete'], to: 'completed', lease: 'holder' },
  /** The run failed (engine error, timeout, lost worker, infrastructure faults exhausted). */
  fail: { from: RUNNING_STATUSES, to: 'failed', lease: 'holder' },
  /** Hand back: the worker stops, the reaper finds the lease expired, or an infrastructure fault. */
  requeue: { from: RUNNING_STATUSES, to: 'queued', lease: 'holder' },
  /** A slot freed: the oldest backlogged job is admitted. */
  promote: { from: ['backlogged'], to: 'queued', lease: 'any' },
  /** DELETE of a job that has not ended. */
  cancel: { from: NON_TERMINAL_STATUSES, to: 'cancelled', lease: 'any' },
  /** A queued job of a remote-bound model that no worker took within its model's timeout. */
  expire: { from: ['queued'], to: 'failed', lease: 'any' },
} as const satisfies Readonly<Record<string, MoveRule>>);

export type MoveName = keyof typeof MOVES;

/** The moves whose target is `S`. */
export type MoveInto<S extends JobStatus> = { [K in MoveName]: (typeof MOVES)[K]['to'] extends S ? K : never }[MoveName];

/** Moves only the lease holder makes (the store requires its `leaseId`). */
export type HolderMove = { [K in MoveName]: (typeof MOVES)[K]['lease'] extends 'holder' ? K : never }[MoveName];

/** Moves that end a job. */
export type EndMove = MoveInto<TerminalStatus>;

/** Legal by the table but made by no code today: kept so that a future rule may fail a waiting job. */
export const UNUSED_TRANSITIONS: readonly (readonly [JobStatus, JobStatus])[] = Object.freeze([['backlogged', 'failed']] as const);

for (const [name, move] of Object.entries(MOVES) as [MoveName, MoveRule][]) {
  for (const from of move.from) {
    if (!canTransition(from, move.to)) throw new Error(`move '${name}' makes the illegal transition ${from} -> ${move.to}`);
  }
}

/** Refuses, before any SQL, a move the caller believes starts from a status its guard excludes. */
export function assertMove(name: MoveName, from: JobStatus): void {
  const move: MoveRule = MOVES[name];
  if (!move.from.includes(from)) throw new IllegalTransitionError(from, move.to);
}
