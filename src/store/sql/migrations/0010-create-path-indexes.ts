import type { Kysely, Migration } from 'kysely';

/** 0010_create_path_indexes: the webhook outbox indexed by workspace. */
export const CREATE_PATH_INDEXES_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    // Every foreign key's child column indexed: a check against the parent (a workspace row
    // updated or removed) then seeks instead of scanning the outbox (docs/benchmarks.md).
    await db.schema.createIndex('webhook_deliveries_workspace').on('webhook_deliveries').columns(['workspace_id', 'created_at']).execute();
  },
};
