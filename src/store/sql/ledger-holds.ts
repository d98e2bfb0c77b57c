import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { newId } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import type { JobHold } from '../billing-store.js';
import type { Database } from '../schema.js';

/**
 * Holds the jobs' prices from the workspace's available balance (balance minus holds) if it covers
 * their sum, and appends one `hold` entry per job; false, and nothing written, when it does not.
 * The check and the hold are one guarded UPDATE, so no second writer spends the same money. With
 * `fused` (PostgreSQL) the UPDATE runs inside the INSERT's WITH: one round trip for any number of
 * jobs, and the entries are written only if the UPDATE found the money.
 */
export async function holdAll(db: Kysely<Database>, workspaceId: string, holds: readonly JobHold[], now: Micros, fused: boolean): Promise<boolean> {
  const total = holds.reduce((sum, h) => sum + h.amountMicros, 0);
  const take = db
    .updateTable('balances')
    .set({ held_micros: sql<number>`held_micros + ${total}` })
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`balance_micros - held_micros >= ${total}`);
  const entries = holds.map((h) => ({ id: newId(), amount: h.amountMicros, job_id: h.jobId, job_type: h.jobType }));
  if (fused) {
    const values = sql.join(entries.map((e) => sql`(${e.id}, ${e.amount}, ${e.job_id}, ${e.job_type})`));
    const r = await sql<{ id: string }>`
      WITH b AS (${take.returning('workspace_id')})
      INSERT INTO ledger_entries (id, workspace_id, kind, amount_micros, job_id, job_type, at)
      SELECT v.id, b.workspace_id, 'hold', CAST(v.amount AS BIGINT), v.job_id, v.job_type, CAST(${now} AS BIGINT)
      FROM (VALUES ${values}) AS v(id, amount, job_id, job_type) CROSS JOIN b
      RETURNING id`.execute(db);
    return r.rows.length === holds.length;
  }
  const taken = await take.returning('workspace_id').executeTakeFirst();
  if (!taken) return false;
  await db
    .insertInto('ledger_entries')
    .values(entries.map((e) => ({ id: e.id, workspace_id: workspaceId, kind: 'hold', amount_micros: e.amount, job_id: e.job_id, job_type: e.job_type, at: now, created_by: null })))
    .execute();
  return true;
}
