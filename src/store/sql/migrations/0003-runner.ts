import type { Kysely, Migration } from 'kysely';

/** 0003_runner: what running a job writes on it (lease, attempts, start, output key), and the indexes of the claim and admission. */
export const RUNNER_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('lease_id', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('lease_expires_at', 'bigint').execute();
    await db.schema.alterTable('jobs').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('jobs').addColumn('started_at', 'bigint').execute();
    await db.schema.alterTable('jobs').addColumn('output_key', 'text').execute();
    // The claim takes the oldest queued job; admission counts a workspace's jobs by status.
    await db.schema.createIndex('jobs_status_created').on('jobs').columns(['status', 'created_at']).execute();
    await db.schema.createIndex('jobs_workspace_status').on('jobs').columns(['workspace_id', 'status', 'created_at']).execute();
    await db.schema.createIndex('jobs_lease_expiry').on('jobs').column('lease_expires_at').execute();
  },
};
