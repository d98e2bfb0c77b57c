import type { Kysely, Migration } from 'kysely';

/** 0008_jobs_output_key: jobs found by their output key. */
export const JOBS_OUTPUT_KEY_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // Output requests and the janitor look jobs up by key; a key names one job's files only.
    await db.schema.createIndex('jobs_output_key').unique().on('jobs').column('output_key').execute();
  },
};
