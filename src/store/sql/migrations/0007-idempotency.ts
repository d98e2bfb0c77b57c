import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/** 0007_idempotency: Idempotency-Key markers, one per workspace and key. */
export const IDEMPOTENCY_MIGRATION: Migration = {
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
};
