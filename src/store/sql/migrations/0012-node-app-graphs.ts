import type { Kysely, Migration } from 'kysely';

/** 0012_node_app_graphs: the graph a node-app version runs. */
export const NODE_APP_GRAPHS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // The graph a version runs (docs/node-apps.md), as JSON text; null: the version cannot run.
    await db.schema.alterTable('node_app_versions').addColumn('graph', 'text').execute();
  },
};
