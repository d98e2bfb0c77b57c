import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { isTerminal } from '../../domain/states.js';
import type { Micros } from '../../lib/time.js';
import type { ExpiredAsset, PrunedRows, RetentionStore, TombstoneCursor } from '../retention-store.js';
import type { Database } from '../schema.js';
import type { DeliveryState } from '../webhook-store.js';
import { oldestUnfinishedJob } from './asset-queries.js';
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
 * Only a terminal move sets completed_at, so the sweeps seek on it alone: a status IN beside it
 * made SQLite walk every finished job by status and sort them. The status is still checked here,
 * so a row that broke that rule would be passed over, never pruned.
 */
const finishedIds = (rows: ReadonlyArray<{ id: string; status: string }>) => rows.filter((r) => isTerminal(r.status)).map((r) => r.id);

/**
 * The retention janitor's batched sweeps (retention-store.ts). Each batch is picked by a SELECT
 * seeking the front of a 0016 index; on PostgreSQL it is FOR UPDATE SKIP LOCKED, so two janitors
 * take disjoint batches and never wait on (or deadlock with) each other or a request; on SQLite
 * the write transaction is serial anyway. Then the write names the picked ids: written as
 * `WHERE id IN (subselect)`, PostgreSQL hashed the ids and scanned the whole table for them
 * (EXPLAIN, 100k jobs). Statements touch at most `limit` rows each, so no lock is held for long.
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
        .select(['id', 'status'])
        .where('outputs_expired_at', 'is', null)
        .where('completed_at', '<=', endedBefore)
        .orderBy('completed_at')
        .limit(limit);
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      const ids = finishedIds(await batch.execute());
      if (ids.length === 0) return { rows: 0, keys: [] };
      // Guarded again: a row expired by anyone else since the pick is not returned twice.
      const rows = await db
        .updateTable('jobs')
        .set({ outputs_expired_at: now })
        .where('id', 'in', ids)
        .where('outputs_expired_at', 'is', null)
        .returning(['status', 'output_key'])
        .execute();
      return { rows: rows.length, keys: await this.#unheld(db, rows.filter(servedUntilNow).map((r) => r.output_key)) };
    });
  }

  deleteJobs(endedBefore: Micros, limit: number): Promise<PrunedRows> {
    return this.#transact(async (db) => {
      let batch = db
        .selectFrom('jobs as j')
        .select(['j.id', 'j.status'])
        .where('j.completed_at', '<=', endedBefore)
        // Its event still goes out, and a receiver may read the job when it arrives.
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select(one).whereRef('d.job_id', '=', 'j.id').where('d.state', '=', 'pending'))),
        )
        .orderBy('j.completed_at')
        .limit(limit);
      // OF j: the pending-delivery check reads deliveries without locking them.
      if (this.#skipLocked) batch = batch.forUpdate(['j']).skipLocked();
      const ids = finishedIds(await batch.execute());
      if (ids.length === 0) return { rows: 0, keys: [] };
      // job_transitions, job_routes and job_tags go by ON DELETE CASCADE; ledger entries, styles and deliveries have no
      // foreign key to the job and stay.
      const rows = await db.deleteFrom('jobs').where('id', 'in', ids).returning(['status', 'output_key', 'outputs_expired_at']).execute();
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

  deleteFreedTombstones(after: TombstoneCursor | null, limit: number): Promise<PrunedRows & { readonly last: TombstoneCursor | null }> {
    return this.#transact(async (db) => {
      let batch = db.selectFrom('assets').select(['id', 'workspace_id', 'deleted_at']).where('deleted_at', 'is not', null);
      // Keyset on (deleted_at, id): one sweep tombstones many assets at one time, so deleted_at
      // alone would pass over the ties at a batch's edge.
      if (after !== null) batch = batch.where((eb) => eb(eb.refTuple('deleted_at', 'id'), '>', eb.tuple(after.deletedAt, after.id)));
      batch = batch.orderBy('deleted_at').orderBy('id').limit(limit);
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      const seen = await batch.execute();
      const end = seen[seen.length - 1];
      const last = seen.length < limit || end === undefined ? null : { deletedAt: Number(end.deleted_at), id: end.id };
      // The rule only ever stops holding: a tombstone's asset can be named by no new job, and
      // the jobs that existed at its deletion only end. So what is freed now stays freed.
      const oldest = new Map<string, number | undefined>();
      for (const ws of new Set(seen.map((r) => r.workspace_id))) oldest.set(ws, await oldestUnfinishedJob(db, ws));
      const freed = seen.filter((r) => {
        const o = oldest.get(r.workspace_id);
        return o === undefined || o > Number(r.deleted_at);
      });
      if (freed.length === 0) return { rows: 0, keys: [], last };
      const rows = await db
        .deleteFrom('assets')
        .where('id', 'in', freed.map((r) => r.id))
        .returning('output_key')
        .execute();
      return { rows: rows.length, keys: rows.map((r) => r.output_key), last };
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

  pruneIdempotencyKeys(createdBefore: Micros, limit: number): Promise<number> {
    return this.#transact(async (db) => {
      let batch = db.selectFrom('idempotency_keys').select('id').where('created_at', '<=', createdBefore).orderBy('created_at').limit(limit);
      // The same pass-by as the prune each claim makes (idempotency-queries.ts).
      if (this.#skipLocked) batch = batch.forUpdate().skipLocked();
      const ids = (await batch.execute()).map((r) => r.id);
      if (ids.length === 0) return 0;
      const gone = await db.deleteFrom('idempotency_keys').where('id', 'in', ids).executeTakeFirst();
      return Number(gone.numDeletedRows);
    });
  }

  async outputsExpired(key: string): Promise<boolean> {
    // A completed job's only: a failed or cancelled job's URLs were 404 since its end and stay so.
    const r = await this.#db
      .selectFrom('jobs')
      .select(one)
      .where('output_key', '=', key)
      .where('status', '=', 'completed')
      .where('outputs_expired_at', 'is not', null)
      .executeTakeFirst();
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
