import type { Kysely, Selectable } from 'kysely';
import type { Database, WorkerTokensTable } from '../schema.js';
import type {
  LiveWorker,
  NewWorkerToken,
  WorkerPresence,
  WorkerToken,
  WorkerTokenMatch,
  WorkerTokenStore,
} from '../remote-token-store.js';

const patterns = (text: string): string[] => JSON.parse(text) as string[];

const toToken = (r: Selectable<WorkerTokensTable>): WorkerToken => ({
  id: r.id,
  name: r.name,
  models: patterns(r.models),
  createdAt: Number(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
});

const toMatch = (r: Selectable<WorkerTokensTable>): WorkerTokenMatch => ({ token: toToken(r), tokenHash: r.token_hash });

export class SqlWorkerTokenStore implements WorkerTokenStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(t: NewWorkerToken): Promise<WorkerToken> {
    const row = {
      id: t.id,
      name: t.name,
      token_hash: t.tokenHash,
      models: JSON.stringify(t.models),
      created_at: t.now,
      last_used_at: null,
      revoked_at: null,
    };
    await this.#db.insertInto('worker_tokens').values(row).execute();
    return toToken(row);
  }

  async list(): Promise<WorkerToken[]> {
    const rows = await this.#db.selectFrom('worker_tokens').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toToken);
  }

  async get(id: string): Promise<WorkerToken | undefined> {
    return (await this.findById(id))?.token;
  }

  async findByHash(tokenHash: string): Promise<WorkerTokenMatch | undefined> {
    const r = await this.#db.selectFrom('worker_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return r && toMatch(r);
  }

  async findById(id: string): Promise<WorkerTokenMatch | undefined> {
    const r = await this.#db.selectFrom('worker_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toMatch(r);
  }

  async revoke(id: string, now: number): Promise<WorkerToken | undefined> {
    await this.#db.updateTable('worker_tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    return this.get(id);
  }

  async touch(id: string, now: number, notSince: number): Promise<void> {
    // Conditional, so that of many concurrent requests with one token only the first writes.
    await this.#db
      .updateTable('worker_tokens')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', notSince)]))
      .execute();
  }

  async upsertPresence(p: WorkerPresence): Promise<void> {
    const row = { pool: p.pool, models: JSON.stringify(p.models), last_seen_at: p.lastSeenAt, token_id: p.tokenId, name: p.name };
    await this.#db
      .insertInto('remote_workers')
      .values({ id: p.id, ...row })
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute();
  }

  async prunePresence(before: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    // DELETE ... LIMIT is not portable; the subquery walks remote_workers_seen from its oldest end.
    const result = await this.#db
      .deleteFrom('remote_workers')
      .where('id', 'in', (eb) => eb.selectFrom('remote_workers').select('id').where('last_seen_at', '<', before).orderBy('last_seen_at', 'asc').limit(limit))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async livePresence(since: number, limit: number): Promise<LiveWorker[]> {
    const rows = await this.#db
      .selectFrom('remote_workers as w')
      .innerJoin('worker_tokens as t', 't.id', 'w.token_id')
      .selectAll('w')
      .select('t.models as token_models')
      .where('w.last_seen_at', '>=', since)
      .where('t.revoked_at', 'is', null)
      .orderBy('w.last_seen_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      tokenId: r.token_id,
      name: r.name,
      pool: r.pool,
      models: patterns(r.models),
      lastSeenAt: Number(r.last_seen_at),
      tokenModels: patterns(r.token_models),
    }));
  }

  async queuedCounts(types: readonly string[], atMost: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (types.length === 0 || atMost <= 0) return counts;
    // The LIMIT inside bounds the work however long the queue: a walk of jobs_status_created.
    const rows = await this.#db
      .selectFrom((eb) =>
        eb.selectFrom('jobs').select('type').where('status', '=', 'queued').where('type', 'in', [...types]).limit(atMost).as('q'),
      )
      .select((eb) => ['q.type', eb.fn.countAll<number>().as('n')])
      .groupBy('q.type')
      .execute();
    for (const r of rows) counts.set(r.type, Number(r.n));
    return counts;
  }
}
