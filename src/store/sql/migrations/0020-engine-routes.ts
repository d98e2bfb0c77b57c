import type { Kysely, Migration } from 'kysely';

/**
 * 0020_engine_routes: what routing keeps with a job (docs/routing.md). `job_routes`: the engines a
 * run tried, in order, and the one that took the job, for the job's details and usage by engine;
 * written only for models with a chain or an engine limit. `engine_slots`: the places a job holds
 * on an engine with `max_in_flight`, one row per job, counted across every process sharing the
 * store; a row whose lease is no longer its job's counts for nothing. Tables of their own: the hot
 * job row and its codec stay as they are. Deleted with their job.
 */
export const ENGINE_ROUTES_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_routes')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('engine', 'text')
      .addColumn('trail', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('engine_slots')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('engine', 'text', (c) => c.notNull())
      .addColumn('lease_id', 'text', (c) => c.notNull())
      .addColumn('acquired_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('engine_slots_engine').on('engine_slots').column('engine').execute();
  },
};
