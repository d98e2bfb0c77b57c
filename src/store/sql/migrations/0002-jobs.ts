import type { Kysely, Migration } from 'kysely';

/** 0002_jobs: jobs, in their API user's creation order. */
export const JOBS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
      .addColumn('api_user_id', 'text', (c) => c.notNull().references('api_users.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('zero_data_retention', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('result', 'text')
      .addColumn('error', 'text')
      .execute();
    // Creation times are unique per API user, so this index is the page order of GET /jobs.
    await db.schema
      .createIndex('jobs_user_created')
      .unique()
      .on('jobs')
      .columns(['api_user_id', 'created_at'])
      .execute();
  },
};
