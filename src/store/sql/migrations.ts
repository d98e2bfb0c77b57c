import type { Kysely, Migration, MigrationProvider } from 'kysely';

/**
 * Numbered migrations, written with Kysely's schema builder so every backend runs the same ones.
 * Never edit a migration that has shipped; add the next number.
 */
const migrations: Record<string, Migration> = {
  '0001_identity': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('api_access', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('max_concurrent_jobs', 'integer', (c) => c.notNull())
        .addColumn('max_backlogged_jobs', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('members')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('members_pk', ['workspace_id', 'email'])
        .execute();
      await db.schema
        .createTable('api_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().unique().references('workspaces.id'))
        .addColumn('last_job_us', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('api_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('api_tokens_workspace')
        .on('api_tokens')
        .columns(['workspace_id', 'created_at'])
        .execute();
    },
  },
  '0002_jobs': {
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
  },
  '0003_runner': {
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
  },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
