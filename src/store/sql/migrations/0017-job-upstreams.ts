import type { Kysely, Migration } from 'kysely';

/**
 * 0017_job_upstreams: a job's counterpart at a hosted provider (store/upstream-store.ts). A table of
 * its own rather than columns on `jobs`: only provider-bound jobs have one, and the hot job row
 * and its codec stay as they are. Deleted with its job.
 */
export const JOB_UPSTREAMS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_upstreams')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('upstream_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
