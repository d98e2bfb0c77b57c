import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { newId } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import type { JobHold } from '../billing-store.js';
import type { Database } from '../schema.js';
import { PreparedQuery } from './prepared-query.js';

type HoldArgs = { args: { workspaceId: string; total: number; now: number } };
type HoldEntry = { id: string; amount: number; job_id: string; job_type: string | null };

/** Takes `total` from the available balance (balance minus holds) if it covers it, in one guarded UPDATE. */
const takeHeld = (db: Kysely<Database>, { args }: HoldArgs) =>
  db
    .updateTable('balances')
    .set({ held_micros: sql<number>`held_micros + ${args.total}` })
    .where('workspace_id', '=', args.workspaceId)
    .where(sql<boolean>`balance_micros - held_micros >= ${args.total}`)
    .returning('workspace_id');

const TAKE_HELD = new PreparedQuery((db, p: HoldArgs) => takeHeld(db, p).compile());

/** PostgreSQL: the UPDATE inside the INSERT's WITH, so the entries exist only if the money was there. */
const HOLD_FUSED = new PreparedQuery(
  (db, p: HoldArgs & { row: (i: number) => HoldEntry }, count: number) => {
    const values = sql.join(Array.from({ length: count }, (_, i) => sql`(${p.row(i).id}, ${p.row(i).amount}, ${p.row(i).job_id}, ${p.row(i).job_type})`));
    return sql<{ id: string }>`
      WITH b AS (${takeHeld(db, p)})
      INSERT INTO ledger_entries (id, workspace_id, kind, amount_micros, job_id, job_type, at)
      SELECT v.id, b.workspace_id, 'hold', CAST(v.amount AS BIGINT), v.job_id, v.job_type, CAST(${p.args.now} AS BIGINT)
      FROM (VALUES ${values}) AS v(id, amount, job_id, job_type) CROSS JOIN b
      RETURNING id`.compile(db);
  },
  String,
);

const INSERT_HOLDS = new PreparedQuery(
  (db, p: HoldArgs & { row: (i: number) => HoldEntry }, count: number) =>
    db
      .insertInto('ledger_entries')
      .values(
        Array.from({ length: count }, (_, i) => {
          const e = p.row(i);
          return { id: e.id, workspace_id: p.args.workspaceId, kind: 'hold', amount_micros: e.amount, job_id: e.job_id, job_type: e.job_type, at: p.args.now, created_by: null };
        }),
      )
      .compile(),
  String,
);

/**
 * Holds the jobs' prices from the workspace's available balance (balance minus holds) if it covers
 * their sum, and appends one `hold` entry per job; false, and nothing written, when it does not.
 * The check and the hold are one guarded UPDATE, so no second writer spends the same money. With
 * `fused` (PostgreSQL) the UPDATE runs inside the INSERT's WITH: one round trip for any number of
 * jobs, and the entries are written only if the UPDATE found the money.
 */
export async function holdAll(db: Kysely<Database>, workspaceId: string, holds: readonly JobHold[], now: Micros, fused: boolean): Promise<boolean> {
  const args = { workspaceId, total: holds.reduce((sum, h) => sum + h.amountMicros, 0), now };
  const entries: HoldEntry[] = holds.map((h) => ({ id: newId(), amount: h.amountMicros, job_id: h.jobId, job_type: h.jobType }));
  if (fused) return (await HOLD_FUSED.execute(db, args, entries.length, entries)).rows.length === holds.length;
  if ((await TAKE_HELD.execute(db, args, undefined)).rows.length === 0) return false;
  await INSERT_HOLDS.execute(db, args, entries.length, entries);
  return true;
}
