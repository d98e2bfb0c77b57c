import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0016_retention: what the retention janitor (services/upkeep/retention.ts) needs. A finished job's
 * outputs can expire before its row goes (`outputs_expired_at`: its URLs then answer 410), and
 * every sweep seeks its oldest candidates on an index instead of walking a whole table: each
 * sweep takes at most a batch from the front of one of these.
 */
export const RETENTION_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // Every index IF NOT EXISTS: on a large PostgreSQL store an operator pre-creates them with
    // CREATE INDEX CONCURRENTLY under these names (docs/operations.md, "Upgrading"), and then this
    // migration only checks they are there. Migrations run in one transaction, so each lock taken
    // here is held until the end: the indexes not needing the new column come first (CREATE INDEX
    // takes a SHARE lock, blocking writes but not reads), and the ALTER's ACCESS EXCLUSIVE lock on
    // jobs (blocking reads too) is taken as late as the partial index on the new column allows.
    // Partial indexes where a sweep reads rows "not yet X, oldest first": PostgreSQL takes no order
    // from an IS NULL on a leading column (EXPLAIN showed a two-column index filtered or passed
    // over for a scan and a sort), and a partial index leaves the done rows out altogether.
    // SQLite uses one when the query repeats the index's WHERE term, as the sweeps do.
    // Live assets by upload time, and tombstones (few) by deletion time, then id: the sweep's
    // keyset cursor, as one sweep tombstones many assets at one time.
    await db.schema.createIndex('assets_live_created').ifNotExists().on('assets').column('created_at').where(sql.ref('deleted_at'), 'is', null).execute();
    await db.schema.createIndex('assets_tombstones').ifNotExists().on('assets').columns(['deleted_at', 'id']).where('deleted_at', 'is not', null).execute();
    // Finished deliveries of one state by age; pending ones are another range, never read.
    await db.schema.createIndex('webhook_deliveries_state_created').ifNotExists().on('webhook_deliveries').columns(['state', 'created_at']).execute();
    // Finished jobs by end, for the row deletion: their outputs may or may not have expired.
    await db.schema.createIndex('jobs_completed').ifNotExists().on('jobs').column('completed_at').execute();
    // Null while the job's files may be served; the sweep's time once they expired. A nullable
    // column with no default: PostgreSQL adds it without rewriting the table.
    await db.schema.alterTable('jobs').addColumn('outputs_expired_at', 'bigint').execute();
    // Jobs whose outputs have not expired, by end (unfinished ones have no end: NULL, before the range).
    await db.schema.createIndex('jobs_outputs_due').ifNotExists().on('jobs').column('completed_at').where(sql.ref('outputs_expired_at'), 'is', null).execute();
  },
};
