import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { TERMINAL_STATUSES } from '../../domain/states.js';
import type { Micros } from '../../lib/time.js';
import type { ExpiredAsset, PrunedRows, RetentionStore } from '../retention-store.js';
import type { Database } from '../schema.js';
import type { DeliveryState } from '../webhook-store.js';
import { unfinishedJobsBefore } from './asset-queries.js';
import { styleKeysKept } from './style-queries.js';
import type { Transact } from './transact.js';

/** Deliveries that will never be sent again: their log is all that is left of them. */
const FINISHED_DELIVERIES: readonly DeliveryState[] = Object.freeze(['delivered', 'gone', 'refused', 'exhausted']);

const one = sql<number>`1`.as('one');

/**
 * A finished job whose files were served until now: a completed one. A failed or cancelled job's
 * files were removed with its end, and the output janitor removes what such a removal left.
 */
const servedUntilNow = (r: { status: string }) => r.status === 'completed';

/**
 * The retention janitor's batched sweeps (retention-store.ts). Each batch is picked by a subselect
 * seeking the front of a 0016 index; on PostgreSQL it is FOR UPDATE SKIP LOCKED, so two janitors
 * take disjoint batches and never wait on (or deadlock with) each other or a request; on SQLite
 * the write transaction is serial anyway. Statements touch at most `limit` rows each, so no lock is
 * held for long.
 */
export class SqlRetentionStore implements RetentionStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #skipLocked: boolean;

  constructor(db: Kysely<Database>, transact: Transact, skipLocked: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#skipLocked = skipLocked;
  }

  expireOutputs(endedBefore: Micros, now: Micros, limit: number): Promise<PrunedRows> {
    return this.#transact(async (db) => {
      let batch = db
        .selectFrom('jobs')
        .select('id')
        .where('outputs_expired_at', 'is', null)
        .where('completed_at', '<=', endedBefore)
        // completed_at is set only by a terminal move; the status says so again, never trusting it alone.
        .where('status', 'in', [...TERMINAL_STATUSES])
        .orderBy('completed_at')
        .limit(limit);
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      const rows = await db.updateTable('jobs').set({ outputs_expired_at: now }).where('id', 'in', batch).returning(['status', 'output_key']).execute();
      return { rows: rows.length, keys: await this.#unheld(db, rows.filter(servedUntilNow).map((r) => r.output_key)) };
    });
  }

  deleteJobs(endedBefore: Micros, limit: number): Promise<PrunedRows> {
    return this.#transact(async (db) => {
      let batch = db
        .selectFrom('jobs as j')
        .select('j.id')
        .where('j.completed_at', '<=', endedBefore)
        .where('j.status', 'in', [...TERMINAL_STATUSES])
        // Its event still goes out, and a receiver may read the job when it arrives.
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select(one).whereRef('d.job_id', '=', 'j.id').where('d.state', '=', 'pending'))),
        )
        .orderBy('j.completed_at')
        .limit(limit);
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      // job_transitions go by ON DELETE CASCADE; ledger entries, styles and deliveries have no
      // foreign key to the job and stay.
      const rows = await db.deleteFrom('jobs').where('id', 'in', batch).returning(['status', 'output_key', 'outputs_expired_at']).execute();
      // Expired outputs were removed when they expired (or left to the output janitor).
      const live = rows.filter((r) => r.outputs_expired_at === null && servedUntilNow(r)).map((r) => r.output_key);
      return { rows: rows.length, keys: await this.#unheld(db, live) };
    });
  }

  async expiredAssets(uploadedBefore: Micros, limit: number): Promise<ExpiredAsset[]> {
    const rows = await this.#db
      .selectFrom('assets')
      .select(['workspace_id', 'id'])
      .where('deleted_at', 'is', null)
      .where('created_at', '<=', uploadedBefore)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ workspaceId: r.workspace_id, id: r.id }));
  }

  deleteFreedTombstones(limit: number): Promise<PrunedRows> {
    return this.#transact(async (db) => {
      // The rule only ever stops holding: a tombstone's asset can be named by no new job, and
      // the jobs that existed at its deletion only end.
      let batch = db
        .selectFrom('assets as a')
        .select('a.id')
        .where('a.deleted_at', 'is not', null)
        .where((eb) => eb.not(eb.exists(unfinishedJobsBefore(db, eb.ref('a.workspace_id'), eb.ref('a.deleted_at')))))
        .orderBy('a.deleted_at')
        .limit(limit);
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      const rows = await db.deleteFrom('assets').where('id', 'in', batch).returning('output_key').execute();
      return { rows: rows.length, keys: rows.map((r) => r.output_key) };
    });
  }

  deleteWebhookLogs(createdBefore: Micros, limit: number): Promise<number> {
    return this.#transact(async (db) => {
      const ids: string[] = [];
      // One state at a time: each is one ordered range of (state, created_at) that the LIMIT ends,
      // where an IN over the states would read every old row to sort them.
      for (const state of FINISHED_DELIVERIES) {
        if (ids.length >= limit) break;
        let batch = db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('state', '=', state)
          .where('created_at', '<=', createdBefore)
          .orderBy('created_at')
          .limit(limit - ids.length);
        if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
        ids.push(...(await batch.execute()).map((r) => r.id));
      }
      if (ids.length === 0) return 0;
      await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      const gone = await db.deleteFrom('webhook_deliveries').where('id', 'in', ids).executeTakeFirst();
      return Number(gone.numDeletedRows);
    });
  }

  async pruneIdempotencyKeys(createdBefore: Micros, limit: number): Promise<number> {
    let batch = this.#db.selectFrom('idempotency_keys').select('id').where('created_at', '<=', createdBefore).orderBy('created_at').limit(limit);
    // The same pass-by as the prune each claim makes (idempotency-queries.ts).
    if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
    const gone = await this.#db.deleteFrom('idempotency_keys').where('id', 'in', batch).executeTakeFirst();
    return Number(gone.numDeletedRows);
  }

  async outputsExpired(key: string): Promise<boolean> {
    const r = await this.#db.selectFrom('jobs').select(one).where('output_key', '=', key).where('outputs_expired_at', 'is not', null).executeTakeFirst();
    return r !== undefined;
  }

  /** The keys among `keys` that no style holds: a style keeps its training job's files. */
  async #unheld(db: Kysely<Database>, keys: ReadonlyArray<string | null>): Promise<string[]> {
    const present = keys.filter((k): k is string => k !== null);
    if (present.length === 0) return [];
    const held = new Set((await styleKeysKept(db, present).execute()).map((r) => r.output_key));
    return present.filter((k) => !held.has(k));
  }
}
