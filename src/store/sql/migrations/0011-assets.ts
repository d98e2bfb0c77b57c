import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/** 0011_assets: the files workspaces upload (docs/assets.md). */
export const ASSETS_MIGRATION: Migration = {
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
};
