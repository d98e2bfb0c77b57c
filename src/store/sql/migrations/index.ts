import { sql } from 'kysely';
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { REMOTE_WORKERS_MIGRATION } from './remote-workers-migration.js';
import { RETENTION_MIGRATION } from './retention-migration.js';
import { STYLES_MIGRATION } from './style-migration.js';
import { TRANSITIONS_MIGRATION } from './transitions-migration.js';

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
  '0004_billing': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('ledger_entries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount_micros', 'bigint', (c) => c.notNull())
        .addColumn('job_id', 'text')
        .addColumn('job_type', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'text')
        .addCheckConstraint('ledger_amount_positive', sql`amount_micros >= 0`)
        .addCheckConstraint('ledger_kind', sql`kind IN ('top_up', 'hold', 'charge', 'release')`)
        .execute();
      // The rule that makes a double charge impossible. Top-ups have no job; NULLs never collide.
      await db.schema.createIndex('ledger_job_kind').unique().on('ledger_entries').columns(['job_id', 'kind']).execute();
      await db.schema.createIndex('ledger_usage').on('ledger_entries').columns(['workspace_id', 'kind', 'at']).execute();
      await db.schema
        .createTable('balances')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
        .addColumn('balance_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('held_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('last_charge_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addCheckConstraint('balances_held_nonnegative', sql`held_micros >= 0`)
        .addCheckConstraint('balances_covers_holds', sql`balance_micros >= held_micros`)
        .execute();
    },
  },
  '0005_node_apps': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('node_apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('author_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('last_version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_version_us', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      // Decides a race between two creators of one slug, without a pre-check.
      await db.schema.createIndex('node_apps_workspace_slug').unique().on('node_apps').columns(['workspace_id', 'slug']).execute();
      await db.schema
        .createTable('node_app_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('node_app_id', 'text', (c) => c.notNull().references('node_apps.id'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('input_schema', 'text', (c) => c.notNull())
        .addColumn('output_schema', 'text', (c) => c.notNull())
        .addColumn('example_outputs', 'text', (c) => c.notNull())
        .addColumn('published_by', 'text', (c) => c.notNull())
        .execute();
      // The last guard of the numbering; the counter on node_apps is the first.
      await db.schema.createIndex('node_app_versions_number').unique().on('node_app_versions').columns(['node_app_id', 'version']).execute();
      // Creation times are unique per app, so this index is the page order of the versions list.
      await db.schema.createIndex('node_app_versions_created').unique().on('node_app_versions').columns(['node_app_id', 'created_at']).execute();
    },
  },
  '0006_webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_secrets')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('api_user_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('lease_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // A job ends once, so it has at most one event: a second row would be a double send.
      await db.schema.createIndex('webhook_deliveries_job').unique().on('webhook_deliveries').column('job_id').execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('next_retry_at', 'bigint')
        .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
        .execute();
    },
  },
  '0007_idempotency': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'bigint')
        .addColumn('job_id', 'text')
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addCheckConstraint('idempotency_state', sql`state IN ('in_flight', 'done')`)
        .execute();
      // Two first requests with one key race on this index: exactly one marker is written.
      await db.schema.createIndex('idempotency_keys_key').unique().on('idempotency_keys').columns(['workspace_id', 'key']).execute();
      await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
    },
  },
  '0008_jobs_output_key': {
    async up(db: Kysely<unknown>) {
      // Output requests and the janitor look jobs up by key; a key names one job's files only.
      await db.schema.createIndex('jobs_output_key').unique().on('jobs').column('output_key').execute();
    },
  },
  '0009_fault_backoff': {
    async up(db: Kysely<unknown>) {
      // A job handed back for an infrastructure fault waits until run_after; fault_count bounds it.
      await db.schema.alterTable('jobs').addColumn('run_after', 'bigint').execute();
      await db.schema.alterTable('jobs').addColumn('fault_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      // /readyz proves the store takes writes by upserting this one row.
      await db.schema
        .createTable('health_probes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0010_create_path_indexes': {
    async up(db: Kysely<unknown>) {
      // Every foreign key's child column indexed: a check against the parent (a workspace row
      // updated or removed) then seeks instead of scanning the outbox (docs/benchmarks.md).
      await db.schema.createIndex('webhook_deliveries_workspace').on('webhook_deliveries').columns(['workspace_id', 'created_at']).execute();
    },
  },
  '0011_assets': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        // Unique: the outputs janitor and the asset file route look an asset up by its key alone.
        .addColumn('output_key', 'text', (c) => c.notNull().unique())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('width', 'integer')
        .addColumn('height', 'integer')
        .addColumn('description', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .addCheckConstraint('assets_size_nonnegative', sql`size_bytes >= 0`)
        .execute();
      // Creation times are unique per workspace, tombstones included: the newest-asset lookup
      // that keeps them increasing reads this index, and it is the last guard of that rule.
      await db.schema.createIndex('assets_workspace_created').unique().on('assets').columns(['workspace_id', 'created_at']).execute();
      // Live assets (deleted_at IS NULL) in page order, with their sizes: the list seeks its page
      // here, and the quota's sum reads this index alone, never the rows. Not a partial index:
      // SQLite does not count a partial index's WHERE column as covered.
      await db.schema
        .createIndex('assets_workspace_live')
        .on('assets')
        .columns(['workspace_id', 'deleted_at', 'created_at', 'size_bytes'])
        .execute();
      // No jobs index: "an unfinished job of the workspace created before T" is a seek per
      // unfinished status on jobs_workspace_status (workspace_id, status, created_at).
    },
  },
  '0012_node_app_graphs': {
    async up(db: Kysely<unknown>) {
      // The graph a version runs (docs/node-apps.md), as JSON text; null: the version cannot run.
      await db.schema.alterTable('node_app_versions').addColumn('graph', 'text').execute();
    },
  },
  '0013_styles': STYLES_MIGRATION,
  '0014_remote_workers': REMOTE_WORKERS_MIGRATION,
  '0015_job_transitions': TRANSITIONS_MIGRATION,
  '0016_retention': RETENTION_MIGRATION,
};

/** The names of every migration this code knows, in order (readiness compares them with the store's). */
export const MIGRATION_NAMES: readonly string[] = Object.freeze(Object.keys(migrations).sort());

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
