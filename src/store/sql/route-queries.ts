import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { RouteRecord, RouteStore } from '../route-store.js';
import type { Database } from '../schema.js';
import type { Transact } from './transact.js';

export class SqlRouteStore implements RouteStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #rowLocks: boolean;

  /** `rowLocks`: PostgreSQL, where concurrent takers of one engine's places serialise on an advisory lock; SQLite's write transaction is serial already. */
  constructor(db: Kysely<Database>, transact: Transact, rowLocks: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#rowLocks = rowLocks;
  }

  async save(record: RouteRecord, leaseId: string): Promise<boolean> {
    const v = { job_id: record.jobId, engine: record.engine, trail: JSON.stringify(record.trail), updated_at: record.updatedAt };
    // Written only while the lease is the caller's, as job_upstreams is: a late answer of a lost run changes nothing.
    const result = await this.#db
      .insertInto('job_routes')
      .columns(['job_id', 'engine', 'trail', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('jobs')
          .select([eb.val(v.job_id).as('job_id'), eb.val(v.engine).as('engine'), eb.val(v.trail).as('trail'), eb.val(v.updated_at).as('updated_at')])
          .where('id', '=', record.jobId)
          .where('lease_id', '=', leaseId),
      )
      .onConflict((oc) => oc.column('job_id').doUpdateSet((eb) => ({ engine: eb.ref('excluded.engine'), trail: eb.ref('excluded.trail'), updated_at: eb.ref('excluded.updated_at') })))
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async find(jobId: string): Promise<RouteRecord | undefined> {
    const row = await this.#db.selectFrom('job_routes').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    return row && { jobId: row.job_id, engine: row.engine, trail: JSON.parse(row.trail) as RouteRecord['trail'], updatedAt: Number(row.updated_at) };
  }

  acquireSlot(engine: string, jobId: string, leaseId: string, max: number, now: number): Promise<boolean> {
    return this.#transact(async (trx) => {
      // One engine's places are counted and taken one taker at a time; other engines' takers pass.
      if (this.#rowLocks) await sql`SELECT pg_advisory_xact_lock(hashtext(${`mediagen.engine_slots:${engine}`}))`.execute(trx);
      // A place outlives its run only when the run died: its job's lease is another's, or none.
      await trx
        .deleteFrom('engine_slots')
        .where('engine', '=', engine)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'engine_slots.job_id').whereRef('jobs.lease_id', '=', 'engine_slots.lease_id'))),
        )
        .execute();
      const held = await trx.selectFrom('engine_slots').select((eb) => eb.fn.countAll<string | number>().as('n')).where('engine', '=', engine).where('job_id', '!=', jobId).executeTakeFirstOrThrow();
      if (Number(held.n) >= max) return false;
      const put = await trx
        .insertInto('engine_slots')
        .columns(['job_id', 'engine', 'lease_id', 'acquired_at'])
        .expression((eb) =>
          eb
            .selectFrom('jobs')
            .select([eb.val(jobId).as('job_id'), eb.val(engine).as('engine'), eb.val(leaseId).as('lease_id'), eb.val(now).as('acquired_at')])
            .where('id', '=', jobId)
            .where('lease_id', '=', leaseId),
        )
        .onConflict((oc) => oc.column('job_id').doUpdateSet((eb) => ({ engine: eb.ref('excluded.engine'), lease_id: eb.ref('excluded.lease_id'), acquired_at: eb.ref('excluded.acquired_at') })))
        .executeTakeFirst();
      return Number(put.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  async releaseSlot(jobId: string): Promise<void> {
    await this.#db.deleteFrom('engine_slots').where('job_id', '=', jobId).execute();
  }

  async slotsInUse(): Promise<ReadonlyMap<string, number>> {
    const rows = await this.#db
      .selectFrom('engine_slots')
      .innerJoin('jobs', (j) => j.onRef('jobs.id', '=', 'engine_slots.job_id').onRef('jobs.lease_id', '=', 'engine_slots.lease_id'))
      .select(['engine_slots.engine', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('engine_slots.engine')
      .execute();
    return new Map(rows.map((r) => [r.engine, Number(r.n)]));
  }
}
