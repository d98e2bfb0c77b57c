import { sql } from 'kysely';
import type { UpdateObject } from 'kysely';
import { MOVES, RUNNING_STATUSES, isTerminal } from '../../domain/states.js';
import type { MoveRule } from '../../domain/states.js';
import type { Database } from '../schema.js';
import type { JobMoveName } from '../queue-store.js';
import { PreparedQuery } from './prepared-query.js';

/**
 * The runner's hot statements (a claim, a move, a lease extension and the admission lock), each
 * built once per shape (prepared-query.ts). The shape carries everything the SQL text depends on;
 * the arguments carry only values.
 */

/** The limits of a workspace, under its row lock where the backend has row locks. */
export const LOCK_WORKSPACE = new PreparedQuery(
  (db, { args }: { args: { workspaceId: string } }, rowLocks: boolean) => {
    const q = db.selectFrom('workspaces').select(['max_concurrent_jobs', 'max_backlogged_jobs']).where('id', '=', args.workspaceId);
    return (rowLocks ? q.forNoKeyUpdate() : q).compile();
  },
  String,
);

/** The lock, the running counts and the balance in one statement (only the workspace row is locked). */
export const LOCK_FOR_ADMISSION = new PreparedQuery(
  (db, { args }: { args: { workspaceId: string } }, rowLocks: boolean) => {
    const q = db
      .selectFrom('workspaces as w')
      .leftJoin('balances as b', 'b.workspace_id', 'w.id')
      .select(['w.max_concurrent_jobs', 'w.max_backlogged_jobs', 'w.active_jobs', 'w.backlogged_jobs', 'b.balance_micros', 'b.held_micros'])
      .where('w.id', '=', args.workspaceId);
    return (rowLocks ? q.forNoKeyUpdate('w') : q).compile();
  },
  String,
);

/** Kept by migration 0018's triggers in the statement that moves a job: no rows are counted. */
export const ADMISSION_COUNTS = new PreparedQuery((db, { args }: { args: { workspaceId: string } }) =>
  db.selectFrom('workspaces').select(['active_jobs', 'backlogged_jobs']).where('id', '=', args.workspaceId).compile(),
);

/** The next backlogged jobs to promote when an end frees a slot. */
export const OLDEST_BACKLOGGED = new PreparedQuery((db, { args }: { args: { workspaceId: string; limit: number } }) =>
  db
    .selectFrom('jobs')
    .select('id')
    .where('workspace_id', '=', args.workspaceId)
    .where('status', '=', 'backlogged')
    .orderBy('created_at')
    .orderBy('id')
    .limit(args.limit)
    .compile(),
);

/** The reaper's sweep, on every worker's timer: leases past their expiry, oldest first. */
export const EXPIRED_LEASES = new PreparedQuery((db, { args }: { args: { now: number; limit: number } }) =>
  db.selectFrom('jobs').selectAll().where('lease_expires_at', '<', args.now).orderBy('lease_expires_at').limit(args.limit).compile(),
);

/** The backstop's look for backlogs beside free slots (an end fills its own workspace's). */
export const WORKSPACES_WITH_BACKLOG = new PreparedQuery((db) =>
  db.selectFrom('jobs').select('workspace_id').distinct().where('status', '=', 'backlogged').compile(),
);

export const EXTEND_LEASE = new PreparedQuery(
  (db, { args }: { args: { id: string; leaseId: string; expiresAt: number; progress?: number } }, withProgress: boolean) =>
    db
      .updateTable('jobs')
      .set({ lease_expires_at: args.expiresAt, ...(withProgress ? { progress: args.progress! } : {}) })
      .where('id', '=', args.id)
      .where('lease_id', '=', args.leaseId)
      .compile(),
  String,
);

/** Which of a move's optional writes and guards its statement has. */
export interface MoveShape {
  readonly name: JobMoveName;
  readonly result: boolean;
  readonly error: boolean;
  readonly faultRetry: boolean;
  readonly uncountAttempt: boolean;
  readonly unchangedSince: boolean;
}

/** A move's values; `result` and `error` already JSON text (or null). */
export interface MoveArgs {
  readonly id: string;
  readonly now: number;
  readonly completedAt: number;
  readonly result?: string | null;
  readonly error?: string | null;
  readonly faultRetryAt?: number;
  readonly unchangedSince?: number;
  readonly leaseId?: string;
}

export const moveKey = (s: MoveShape): string =>
  `${s.name}:${+s.result}${+s.error}${+s.faultRetry}${+s.uncountAttempt}${+s.unchangedSince}`;

/** A named move: one guarded UPDATE, its guard the move's `from` statuses (and the lease for a holder's move). */
export const MOVE = new PreparedQuery((db, { args }: { args: MoveArgs }, shape: MoveShape) => {
  const rule: MoveRule = MOVES[shape.name];
  const set: UpdateObject<Database, 'jobs'> = { status: rule.to, updated_at: args.now };
  if (shape.result) set.result = args.result!;
  if (shape.error) set.error = args.error!;
  if (!RUNNING_STATUSES.includes(rule.to)) {
    // A lease exists only while its job runs.
    set.lease_id = null;
    set.lease_expires_at = null;
  }
  if (isTerminal(rule.to)) {
    set.completed_at = args.completedAt;
    // Zero data retention: the prompt and inputs go in the same write that ends the job.
    set.request = sql<string>`CASE WHEN zero_data_retention = 1 THEN '{}' ELSE request END`;
  }
  if (shape.faultRetry) {
    set.run_after = args.faultRetryAt!;
    set.fault_count = sql<number>`fault_count + 1`;
  }
  if (shape.uncountAttempt) set.attempts = sql<number>`attempts - 1`;
  let q = db.updateTable('jobs').set(set).where('id', '=', args.id).where('status', 'in', rule.from);
  if (shape.unchangedSince) q = q.where('updated_at', '<=', args.unchangedSince!);
  if (rule.lease === 'holder') q = q.where('lease_id', '=', args.leaseId!);
  return q.returningAll().compile();
}, moveKey);
