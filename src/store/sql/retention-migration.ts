import type { Kysely, Migration } from 'kysely';

/**
 * 0016_retention: what the retention janitor (services/retention.ts) needs. A finished job's
 * outputs can expire before its row goes (`outputs_expired_at`: its URLs then answer 410), and
 * every sweep seeks its oldest candidates on an index instead of walking a whole table: each
 * sweep takes at most a batch from the front of one of these. Its own module to keep
 * migrations.ts short.
 */
export const RETENTION_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // Null while the job's files may be served; the sweep's time once they expired.
    await db.schema.alterTable('jobs').addColumn('outputs_expired_at', 'bigint').execute();
    // Finished jobs whose outputs have not expired, oldest end first: a seek on (NULL, completed_at).
    // Unfinished jobs (completed_at NULL) sit before the range and are never read.
    await db.schema.createIndex('jobs_outputs_expiry').on('jobs').columns(['outputs_expired_at', 'completed_at']).execute();
    // Finished jobs by end, for the row deletion: their outputs may or may not have expired.
    await db.schema.createIndex('jobs_completed').on('jobs').column('completed_at').execute();
    // Live assets by upload time (deleted_at NULL), and tombstones by deletion time.
    await db.schema.createIndex('assets_retention').on('assets').columns(['deleted_at', 'created_at']).execute();
    // Finished deliveries of one state by age; pending ones are another range, never read.
    await db.schema.createIndex('webhook_deliveries_state_created').on('webhook_deliveries').columns(['state', 'created_at']).execute();
  },
};
