import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0021_fair_share: a workspace's claim `priority` (0 to 9, higher first; 5 for every existing
 * workspace), and an index of the workspaces with admitted jobs, the only ones a claim looks at
 * (store/sql/claim-statement.ts): a claim walks those workspaces, not the jobs table, to choose
 * whose job runs next, so its cost stays the same at any number of stored jobs (issue 40).
 *
 * No new running numbers: a workspace's running jobs are counted along jobs_workspace_status, a
 * range its `max_concurrent_jobs` bounds, and a trigger keeping them would make every claim write
 * the workspace row, which admission locks (store/locked-workspace.ts).
 */
export const FAIR_SHARE_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('workspaces').addColumn('priority', 'integer', (c) => c.notNull().defaultTo(5)).execute();
    await db.schema.createIndex('workspaces_admitted').on('workspaces').columns(['priority', 'id']).where(sql.ref('active_jobs'), '>', 0).execute();
  },
};
