import type { Kysely, Migration } from 'kysely';

/** 0009_fault_backoff: an infrastructure fault's backoff on jobs, and the table readiness writes to. */
export const FAULT_BACKOFF_MIGRATION: Migration = {
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
};
