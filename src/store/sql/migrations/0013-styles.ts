import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0013_styles: the styles a training job makes (docs/styles.md), and who created each job, so a
 * style knows the member whose token trained it.
 */
export const STYLES_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('created_by', 'text').execute();
    await db.schema
      .createTable('styles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
      .addColumn('api_user_id', 'text', (c) => c.notNull())
      .addColumn('trained_by', 'text')
      // No foreign key: a style outlives its training job. One style per job.
      .addColumn('job_id', 'text', (c) => c.unique())
      .addColumn('title', 'text')
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('type', 'text')
      .addColumn('trigger_word', 'text')
      .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('shared_with_workspace', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('urls', 'text', (c) => c.notNull())
      .addColumn('cover_url', 'text')
      .addColumn('output_key', 'text')
      .addColumn('artifact', 'text', (c) => c.notNull())
      .addColumn('like_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('share_link_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addCheckConstraint('styles_flags', sql`public IN (0, 1) AND shared_with_workspace IN (0, 1)`)
      .execute();
    // Creation times are unique per workspace: the list's time cursor is exact, and the newest
    // style (what the next one's time follows) is one seek from the end.
    await db.schema.createIndex('styles_workspace_created').unique().on('styles').columns(['workspace_id', 'created_at']).execute();
    // The janitor and /outputs ask whether a style keeps a key (its cover).
    await db.schema.createIndex('styles_output_key').on('styles').column('output_key').execute();
  },
};
