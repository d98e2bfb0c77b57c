import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import { newId } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import { holdAll } from './ledger-holds.js';
import type { Balance, BillingStore, JobHold, ChargeQuery, ChargeSum, ChargeSumQuery, LedgerEntry, LedgerKind, NewHold, NewTopUp } from '../billing-store.js';
import type { Database, LedgerEntriesTable } from '../schema.js';
import type { Transact } from './transact.js';
import { PreparedQuery } from './prepared-query.js';

const MICROS_PER_DAY = 86_400_000_000;

const toEntry = (r: Selectable<LedgerEntriesTable>): LedgerEntry => ({
  id: r.id,
  workspaceId: r.workspace_id,
  kind: r.kind as LedgerKind,
  amountMicros: Number(r.amount_micros),
  jobId: r.job_id,
  jobType: r.job_type,
  at: Number(r.at),
  createdBy: r.created_by,
});

const toBalance = (r: { balance_micros: number; held_micros: number } | undefined): Balance => ({
  balanceMicros: Number(r?.balance_micros ?? 0),
  heldMicros: Number(r?.held_micros ?? 0),
});

/** A seek on ledger_job_kind (job_id, kind): at most three rows. */
const ENTRIES_OF_JOB = new PreparedQuery((db, { args }: { args: { jobId: string } }) =>
  db.selectFrom('ledger_entries').selectAll().where('job_id', '=', args.jobId).compile(),
);

/** A settlement's move of the running totals; a charge also advances the workspace's charge clock. */
const SETTLE_TOTALS = new PreparedQuery(
  (db, { args }: { args: { workspaceId: string; charged: number; held: number; now: number } }, kind: 'charge' | 'release') =>
    db
      .updateTable('balances')
      .set(
        kind === 'charge'
          ? {
              balance_micros: sql<number>`balance_micros - ${args.charged}`,
              held_micros: sql<number>`held_micros - ${args.held}`,
              last_charge_at: sql<number>`CASE WHEN last_charge_at + 1 > CAST(${args.now} AS BIGINT) THEN last_charge_at + 1 ELSE CAST(${args.now} AS BIGINT) END`,
            }
          : { held_micros: sql<number>`held_micros - ${args.held}` },
      )
      .where('workspace_id', '=', args.workspaceId)
      .returning('last_charge_at')
      .compile(),
  String,
);

const APPEND_ENTRY = new PreparedQuery((db, { args: e }: { args: Selectable<LedgerEntriesTable> }) =>
  db
    .insertInto('ledger_entries')
    // Named one by one: the build's stand-ins have no keys to spread.
    .values({ id: e.id, workspace_id: e.workspace_id, kind: e.kind, amount_micros: e.amount_micros, job_id: e.job_id, job_type: e.job_type, at: e.at, created_by: e.created_by })
    .compile(),
);

/**
 * The ledger's queries. Each write appends its entry and moves the running totals in one
 * transaction; the totals' CHECK constraints (balance >= held >= 0) are the last line of defence,
 * and the unique (job_id, kind) makes a second hold, charge or release of one job unwritable.
 */
export class SqlBillingStore implements BillingStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #fusedWrites: boolean;

  /** `fusedWrites`: the backend runs an UPDATE inside a WITH (PostgreSQL), so two writes are one round trip. */
  constructor(db: Kysely<Database>, transact: Transact, fusedWrites = false) {
    this.#db = db;
    this.#transact = transact;
    this.#fusedWrites = fusedWrites;
  }

  async getBalance(workspaceId: string): Promise<Balance> {
    const row = await this.#db
      .selectFrom('balances')
      .select(['balance_micros', 'held_micros'])
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return toBalance(row);
  }

  topUp({ workspaceId, amountMicros, createdBy, now }: NewTopUp): Promise<Balance> {
    return this.#transact(async (db) => {
      const row = await db
        .insertInto('balances')
        .values({ workspace_id: workspaceId, balance_micros: amountMicros, held_micros: 0, last_charge_at: 0 })
        .onConflict((oc) =>
          oc.column('workspace_id').doUpdateSet({ balance_micros: sql<number>`balances.balance_micros + ${amountMicros}` }),
        )
        .returning(['balance_micros', 'held_micros'])
        .executeTakeFirstOrThrow();
      await this.#append(db, { workspace_id: workspaceId, kind: 'top_up', amount_micros: amountMicros, at: now, created_by: createdBy });
      return toBalance(row);
    });
  }

  hold({ workspaceId, jobId, jobType, amountMicros, now }: NewHold): Promise<Balance | undefined> {
    return this.#transact(async (db) => {
      if (!(await holdAll(db, workspaceId, [{ jobId, jobType, amountMicros }], now, this.#fusedWrites))) return undefined;
      return new SqlBillingStore(db, this.#transact).getBalance(workspaceId);
    });
  }

  async holdMany(workspaceId: string, holds: readonly JobHold[], now: Micros): Promise<boolean> {
    return holds.length === 0 || this.#transact((db) => holdAll(db, workspaceId, holds, now, this.#fusedWrites));
  }

  async findBalance(workspaceId: string): Promise<Balance | undefined> {
    const row = await this.#db.selectFrom('balances').select(['balance_micros', 'held_micros']).where('workspace_id', '=', workspaceId).executeTakeFirst();
    return row && toBalance(row);
  }

  charge(jobId: string, now: Micros, amountMicros?: number): Promise<LedgerEntry | undefined> {
    return this.#settle(jobId, 'charge', now, amountMicros);
  }

  release(jobId: string, now: Micros): Promise<LedgerEntry | undefined> {
    return this.#settle(jobId, 'release', now);
  }

  async entriesOfJob(jobId: string): Promise<LedgerEntry[]> {
    // A seek on ledger_job_kind (job_id, kind): at most three rows.
    return (await ENTRIES_OF_JOB.execute(this.#db, { jobId }, undefined)).rows.map(toEntry);
  }

  async listEntries(workspaceId: string): Promise<LedgerEntry[]> {
    const rows = await this.#db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('at')
      .orderBy('id')
      .execute();
    return rows.map(toEntry);
  }

  async listCharges({ workspaceId, from, before, limit }: ChargeQuery): Promise<LedgerEntry[]> {
    const rows = await this.#db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'charge')
      .where('at', '>=', from)
      .where('at', '<', before)
      .orderBy('at', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toEntry);
  }

  async sumCharges({ workspaceId, from, before, byDay, byModel, byEngine = false, byTag = false }: ChargeSumQuery): Promise<ChargeSum[]> {
    // A range scan of ledger_usage (workspace_id, kind, at). COUNT and SUM are BIGINT and NUMERIC
    // on PostgreSQL (strings through pg), integers on SQLite: both read with Number(), exact below
    // 2^53 micro-USD. The day is integer division on both backends (`at` + offset is never
    // negative), grouped by its alias: the same expression twice would be two parameters to PostgreSQL.
    let q = this.#db
      .selectFrom('ledger_entries')
      .select([sql<string | number>`COUNT(*)`.as('jobs'), sql<string | number>`COALESCE(SUM(amount_micros), 0)`.as('micros')])
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'charge')
      .where('at', '>=', from)
      .where('at', '<', before);
    if (byDay) {
      q = q.select(sql<string | number>`(at + CAST(${byDay.offset} AS BIGINT)) / ${sql.lit(MICROS_PER_DAY)}`.as('day')).groupBy(sql.ref('day'));
    }
    // By engine, by job type too: the caller names the engine of a job without a route by its model.
    if (byModel || byEngine) q = q.select(sql<string | null>`job_type`.as('model')).groupBy('job_type');
    // A job's route is one row at most (its primary key): the join multiplies nothing.
    if (byEngine) q = q.leftJoin('job_routes', 'job_routes.job_id', 'ledger_entries.job_id').select(sql<string | null>`job_routes.engine`.as('engine')).groupBy('job_routes.engine');
    // Each tag of a job is one row of the join (its primary key is job and tag): a charge counts once per tag, once if it has none.
    if (byTag) q = q.leftJoin('job_tags', 'job_tags.job_id', 'ledger_entries.job_id').select(sql<string | null>`job_tags.tag`.as('tag')).groupBy('job_tags.tag');
    const rows = (await q.execute()) as { jobs: string | number; micros: string | number; day?: string | number; model?: string | null; engine?: string | null; tag?: string | null }[];
    return rows.map((r) => ({
      ...(byDay ? { day: Number(r.day) } : {}),
      ...(byModel || byEngine ? { model: r.model ?? '' } : {}),
      ...(byEngine ? { engine: r.engine ?? null } : {}),
      ...(byTag ? { tag: r.tag ?? null } : {}),
      jobs: Number(r.jobs),
      amountMicros: Number(r.micros),
    }));
  }

  /**
   * Ends a job's hold as a charge or a release, once: a settled or unheld job is left alone. A
   * charge of less than the hold (`amount`, clamped to [0, hold]) releases the rest in the same
   * transaction, so the entries still add up to the running totals.
   */
  #settle(jobId: string, kind: 'charge' | 'release', now: Micros, amount?: number): Promise<LedgerEntry | undefined> {
    return this.#transact(async (db) => {
      const entries = (await ENTRIES_OF_JOB.execute(db, { jobId }, undefined)).rows;
      const hold = entries.find((e) => e.kind === 'hold');
      if (!hold || entries.some((e) => e.kind === 'charge' || e.kind === 'release')) return undefined;
      const held = Number(hold.amount_micros);
      // A metered amount is clamped to [0, hold]; a non-finite one (a bad measurement) charges the hold.
      const metered = amount !== undefined && Number.isFinite(amount) ? amount : held;
      const charged = kind === 'release' ? 0 : Math.min(held, Math.max(0, Math.round(metered)));
      const totals = (await SETTLE_TOTALS.execute(db, { workspaceId: hold.workspace_id, charged, held, now }, kind)).rows[0];
      if (!totals) throw new Error(`workspace ${hold.workspace_id} has a hold but no balance`);
      const entry = (kind: 'charge' | 'release', amountMicros: number, at: Micros) =>
        this.#append(db, { workspace_id: hold.workspace_id, kind, amount_micros: amountMicros, job_id: jobId, job_type: hold.job_type, at });
      if (kind === 'release') return toEntry(await entry('release', held, now));
      const charge = toEntry(await entry('charge', charged, Number(totals.last_charge_at)));
      if (charged < held) await entry('release', held - charged, now);
      return charge;
    });
  }

  async #append(
    db: Kysely<Database>,
    entry: Omit<LedgerEntriesTable, 'id' | 'job_id' | 'job_type' | 'created_by'> & Partial<Pick<LedgerEntriesTable, 'job_id' | 'job_type' | 'created_by'>>,
  ): Promise<Selectable<LedgerEntriesTable>> {
    const row = { id: newId(), job_id: null, job_type: null, created_by: null, ...entry };
    await APPEND_ENTRY.execute(db, row, undefined);
    return row;
  }
}
