import type { Selectable } from 'kysely';
import type { WebhookDeliveriesTable } from '../schema.js';
import { createdAfterNewest } from './increasing-time.js';
import { PreparedQuery } from './prepared-query.js';

/**
 * The outbox's statements on every job's path: the delivery row an end writes, and the sender's
 * claim, send and record. Built once per shape (prepared-query.ts).
 */

type NewRow = Omit<Selectable<WebhookDeliveriesTable>, 'created_at' | 'lease_until' | 'state' | 'attempts'>;

/**
 * One delivery, its created_at strictly after the workspace's newest (increasing-time.ts),
 * so GET /webhook-deliveries pages by time exactly; the end's workspace lock orders concurrent ends.
 */
export const ENQUEUE = new PreparedQuery((db, { args: d }: { args: NewRow }) =>
  db
    .insertInto('webhook_deliveries')
    .values({
      id: d.id,
      job_id: d.job_id,
      workspace_id: d.workspace_id,
      api_user_id: d.api_user_id,
      url: d.url,
      payload: d.payload,
      state: 'pending',
      attempts: 0,
      next_attempt_at: d.next_attempt_at,
      lease_until: null,
      created_at: createdAfterNewest('webhook_deliveries', d.workspace_id, d.next_attempt_at!),
    })
    .compile(),
);

/** The oldest due deliveries; `skipLocked` (PostgreSQL, in the claim's transaction) passes other senders' rows. */
export const DUE = new PreparedQuery(
  (db, { args }: { args: { now: number; limit: number } }, skipLocked: boolean) => {
    const q = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', args.now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', args.now)]))
      .orderBy('next_attempt_at')
      .limit(args.limit);
    return (skipLocked ? q.forUpdate().skipLocked() : q).compile();
  },
  String,
);

type Id = { id: string };

export const LEASE = new PreparedQuery(
  (db, { args, row }: { args: { leaseUntil: number }; row: (i: number) => Id }, count: number) =>
    db
      .updateTable('webhook_deliveries')
      .set({ lease_until: args.leaseUntil })
      .where('id', 'in', Array.from({ length: count }, (_, i) => row(i).id))
      .where('state', '=', 'pending')
      .returningAll()
      .compile(),
  String,
);

/** The request that created each job, for the sender's log lines (the job may be gone). */
export const REQUEST_IDS = new PreparedQuery(
  (db, { row }: { row: (i: number) => Id }, count: number) =>
    db
      .selectFrom('jobs')
      .select(['id', 'request_id'])
      .where('id', 'in', Array.from({ length: count }, (_, i) => row(i).id))
      .compile(),
  String,
);

type Attempt = {
  deliveryId: string;
  leaseUntil: number;
  state: string;
  attempt: number;
  attemptedAt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  nextRetryAt: number | null;
};

/** The end of one send, guarded by the sender's lease. */
export const SETTLE_DELIVERY = new PreparedQuery((db, { args: a }: { args: Attempt }) =>
  db
    .updateTable('webhook_deliveries')
    .set({ state: a.state, attempts: a.attempt, next_attempt_at: a.nextRetryAt, lease_until: null })
    .where('id', '=', a.deliveryId)
    .where('state', '=', 'pending')
    .where('lease_until', '=', a.leaseUntil)
    .compile(),
);

export const LOG_ATTEMPT = new PreparedQuery((db, { args: a }: { args: Attempt }) =>
  db
    .insertInto('webhook_attempts')
    .values({
      delivery_id: a.deliveryId,
      attempt: a.attempt,
      attempted_at: a.attemptedAt,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      next_retry_at: a.nextRetryAt,
    })
    .compile(),
);

export const SECRETS = new PreparedQuery((db, { args }: { args: { workspaceId: string } }) =>
  db.selectFrom('webhook_secrets').selectAll().where('workspace_id', '=', args.workspaceId).compile(),
);
