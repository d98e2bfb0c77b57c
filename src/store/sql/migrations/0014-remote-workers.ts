import type { Kysely, Migration } from 'kysely';

/**
 * 0014_remote_workers: worker tokens (docs/workers.md), the presence of the remote workers using
 * them, a running job's progress fraction, and an index of jobs by status and type.
 */
export const REMOTE_WORKERS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // Not API tokens: no workspace, and a table of their own, so neither kind authenticates as the other.
    await db.schema
      .createTable('worker_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('models', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    // One row per (token, worker_id), rewritten by that worker's claims; never a foreign key, so
    // presence bookkeeping can never block a token's revocation.
    await db.schema
      .createTable('remote_workers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('pool', 'text')
      .addColumn('models', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .execute();
    // Readiness reads the workers seen lately: a range on this index, not the whole table.
    await db.schema.createIndex('remote_workers_seen').on('remote_workers').column('last_seen_at').execute();
    // Claims of remote workers (type IN) and in-process ones (type NOT IN) and remote maintenance's
    // overdue scan (one type at a time) walk one status and type in creation order.
    await db.schema.createIndex('jobs_status_type_created').on('jobs').columns(['status', 'type', 'created_at']).execute();
    // 'double precision' is a float8 on PostgreSQL and has REAL affinity on SQLite.
    await db.schema.alterTable('jobs').addColumn('progress', 'double precision').execute();
  },
};
