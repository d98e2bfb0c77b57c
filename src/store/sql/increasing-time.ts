import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from '../schema.js';

/**
 * The created_at of a new row of a per-workspace list paged by time (assets, styles, webhook
 * deliveries): `now`, or one
 * microsecond after the workspace's newest row (deleted ones too) if that is later, so the times
 * are strictly increasing per workspace and a time cursor is exact. The newest is one seek from the
 * end of the table's (workspace_id, created_at) index.
 *
 * Two inserts for one workspace must not both read the same newest time. SQLite's write
 * transaction is serial already; where writers take row locks (PostgreSQL, `rowLocks`) the
 * workspace row lock (the first lock of any transaction on a workspace: see LockedWorkspace)
 * queues them, and the INSERT that uses the expression, a new statement, then sees the previous
 * holder's row. A caller holding the lock already passes straight through. Call it inside the
 * inserting transaction, before the INSERT.
 */
export async function nextCreatedAt(
  db: Kysely<Database>,
  table: 'assets' | 'styles' | 'webhook_deliveries',
  workspaceId: string,
  now: number,
  rowLocks: boolean,
): Promise<RawBuilder<number>> {
  if (rowLocks) await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forNoKeyUpdate().execute();
  return createdAfterNewest(table, workspaceId, now);
}

/** nextCreatedAt's expression alone, for a caller that already holds the order (a prepared statement's build). */
export function createdAfterNewest(table: 'assets' | 'styles' | 'webhook_deliveries', workspaceId: string, now: number): RawBuilder<number> {
  const newest = sql<number | null>`(SELECT created_at FROM ${sql.table(table)} WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC LIMIT 1)`;
  return sql<number>`CASE WHEN ${newest} + 1 > CAST(${now} AS BIGINT) THEN ${newest} + 1 ELSE CAST(${now} AS BIGINT) END`;
}
