import type { Kysely, Migration } from 'kysely';

/**
 * 0023_job_tags: the labels a create may carry (`X-Mediagen-Tags`, issue 40), kept twice, each for
 * its readers. `jobs.tags` (comma-joined, sorted; null without tags) is the job's own, read with
 * the row by every view of it, so showing tags costs no statement. `job_tags` holds one row per
 * tag for what a string column cannot do with an index: `GET /jobs?tag=` seeks
 * (api_user_id, tag, created_at) newest first, and `GET /usage/summary?group_by=tag` joins the
 * charges to it by job. The rows go with their job (ON DELETE CASCADE, as its transitions and
 * route do); a job without tags writes none.
 */
export const JOB_TAGS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('tags', 'text').execute();
    await db.schema
      .createTable('job_tags')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('api_user_id', 'text', (c) => c.notNull())
      // The job's created_at: the list's cursor, strictly increasing per API user.
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_tags_pkey', ['job_id', 'tag'])
      .execute();
    await db.schema.createIndex('job_tags_user_tag_created').on('job_tags').columns(['api_user_id', 'tag', 'created_at']).execute();
  },
};
