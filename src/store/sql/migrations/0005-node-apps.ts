import type { Kysely, Migration } from 'kysely';

/** 0005_node_apps: node apps and their numbered versions (docs/node-apps.md). */
export const NODE_APPS_MIGRATION: Migration = {
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
};
