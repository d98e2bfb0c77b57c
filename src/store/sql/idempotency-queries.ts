import type { Kysely, Selectable } from 'kysely';
import type { Micros } from '../../lib/time.js';
import type { IdempotencyRecord, IdempotencyState, IdempotencyStore, NewMarker, StoredResponse } from '../idempotency-store.js';
import type { Database, IdempotencyKeysTable } from '../schema.js';
import type { Transact } from './transact.js';

const toRecord = (r: Selectable<IdempotencyKeysTable>): IdempotencyRecord => ({
  workspaceId: r.workspace_id,
  key: r.key,
  attemptId: r.id,
  requestHash: r.request_hash,
  endpoint: r.endpoint,
  state: r.state as IdempotencyState,
  leaseUntil: r.lease_until === null ? null : Number(r.lease_until),
  jobId: r.job_id,
  responseStatus: r.response_status === null ? null : Number(r.response_status),
  responseBody: r.response_body === null ? null : (JSON.parse(r.response_body) as Record<string, unknown>),
  createdAt: Number(r.created_at),
});

/**
 * The Idempotency-Key queries. The unique (workspace_id, key) index decides between two first
 * requests: `INSERT ... ON CONFLICT DO NOTHING` writes one marker, and the other reads it.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #skipLocked: boolean;

  constructor(db: Kysely<Database>, transact: Transact, skipLocked: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#skipLocked = skipLocked;
  }

  claim(m: NewMarker, expiredBefore: Micros, pruneLimit: number): Promise<{ claimed: boolean; record: IdempotencyRecord }> {
    return this.#transact(async (db) => {
      // An expired key, or the marker of a request that died, no longer holds the key.
      await db
        .deleteFrom('idempotency_keys')
        .where('workspace_id', '=', m.workspaceId)
        .where('key', '=', m.key)
        .where((eb) => eb.or([eb('created_at', '<=', expiredBefore), eb.and([eb('state', '=', 'in_flight'), eb('lease_until', '<', m.now)])]))
        .execute();
      await this.#prune(db, expiredBefore, pruneLimit);
      // A holder can vanish between our failed insert and the read (its request failed): try again.
      for (let tries = 0; tries < 3; tries++) {
        const mine = await db
          .insertInto('idempotency_keys')
          .values({
            id: m.attemptId,
            workspace_id: m.workspaceId,
            key: m.key,
            endpoint: m.endpoint,
            request_hash: m.requestHash,
            state: 'in_flight',
            lease_until: m.leaseUntil,
            job_id: null,
            response_status: null,
            response_body: null,
            created_at: m.now,
          })
          .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
          .returningAll()
          .executeTakeFirst();
        if (mine) return { claimed: true, record: toRecord(mine) };
        const holder = await this.#find(db, m.workspaceId, m.key);
        if (holder) return { claimed: false, record: holder };
      }
      throw new Error('an idempotency key was neither free nor held three times in a row');
    });
  }

  async complete(r: StoredResponse): Promise<boolean> {
    const updated = await this.#db
      .updateTable('idempotency_keys')
      .set({ state: 'done', lease_until: null, job_id: r.jobId, response_status: r.status, response_body: JSON.stringify(r.body) })
      .where('workspace_id', '=', r.workspaceId)
      .where('key', '=', r.key)
      .where('id', '=', r.attemptId)
      .where('state', '=', 'in_flight')
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async release(workspaceId: string, key: string, attemptId: string): Promise<void> {
    await this.#db
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .where('id', '=', attemptId)
      .where('state', '=', 'in_flight')
      .execute();
  }

  get(workspaceId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return this.#find(this.#db, workspaceId, key);
  }

  async #find(db: Kysely<Database>, workspaceId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
    return row && toRecord(row);
  }

  /** A bounded delete of expired keys, oldest first, so no request pays for a long backlog. */
  async #prune(db: Kysely<Database>, expiredBefore: Micros, limit: number): Promise<void> {
    if (limit <= 0) return;
    let oldest = db.selectFrom('idempotency_keys').select('id').where('created_at', '<=', expiredBefore).orderBy('created_at').limit(limit);
    // PostgreSQL: two pruners pass each other's rows instead of waiting on them (or deadlocking).
    if (this.#skipLocked) oldest = oldest.forUpdate().skipLocked();
    await db.deleteFrom('idempotency_keys').where('id', 'in', oldest).execute();
  }
}
