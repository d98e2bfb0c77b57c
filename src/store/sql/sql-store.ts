import { CompiledQuery, Migrator, sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { JobEvent, Store, StoreTx } from '../store.js';
import { SqlAssetStore } from './asset-queries.js';
import { SqlBillingStore } from './billing-queries.js';
import { SqlTokenBudgetStore } from './token-budget-queries.js';
import { SqlIdempotencyStore } from './idempotency-queries.js';
import { SqlIdentityStore } from './identity-queries.js';
import { SqlJobStore } from './job-queries.js';
import { MIGRATION_NAMES, migrationProvider } from './migrations/index.js';
import { SqlNodeAppStore } from './node-app-queries.js';
import { SqlQueueStore } from './queue-queries.js';
import { SqlQueueStatsStore } from './queue-stats-queries.js';
import { SqlRetentionStore } from './retention-queries.js';
import { SqlStyleStore } from './style-queries.js';
import type { EventSender, QueueCaps } from './queue-queries.js';
import { SqlWebhookStore } from './webhook-queries.js';
import type { Transact } from './transact.js';
import { SqlWorkerTokenStore } from './remote-token-queries.js';
import { SqlUpstreamStore } from './upstream-queries.js';
import { SqlRouteStore } from './route-queries.js';
import { SqlOpenAiVideoStore } from './openai-video-queries.js';

export interface SqlBackend {
  readonly db: Kysely<Database>;
  readonly transact: Transact;
  /**
   * Kysely locks migrations on PostgreSQL (an advisory lock) but not on SQLite, where several
   * processes opening a fresh file at once would each try to create the tables. There the whole
   * migration runs inside the backend's own write transaction instead.
   */
  readonly migrationsNeedWriteLock: boolean;
  /** Claims can pass each other's row locks (FOR UPDATE SKIP LOCKED). */
  readonly skipLocked: boolean;
  /** Writers take row locks (PostgreSQL); SQLite's write transaction is serial for the whole file. */
  readonly rowLocks: boolean;
  /** Sends cross-process events inside the transaction, delivered at its commit (PostgreSQL NOTIFY). */
  readonly sendEvent?: EventSender;
  /**
   * An UPDATE may sit inside a WITH (PostgreSQL): two writes of the create path become one
   * statement, one round trip fewer each under the workspace lock.
   */
  readonly fusedWrites?: boolean;
  /** Cross-process events received: PostgreSQL's LISTEN, SQLite's wake sockets. */
  readonly listen?: Store['listen'];
  /** Sends a committed event to the other processes; never throws. */
  readonly publish?: (event: JobEvent) => void;
  /** Ends what the backend holds besides Kysely's pool (the LISTEN connection). */
  readonly closeExtra?: () => Promise<void>;
  readonly backup?: Store['backup'];
}

/** A shared write's savepoint (services/common/shared-writes.ts), compiled once. */
const SAVEPOINT = CompiledQuery.raw('SAVEPOINT member');
const RELEASE = CompiledQuery.raw('RELEASE SAVEPOINT member');
const ROLLBACK_TO = CompiledQuery.raw('ROLLBACK TO SAVEPOINT member');

type BoundCaps = QueueCaps & { readonly fusedWrites: boolean };

/** Query modules bound to one transaction: calls inside it join it instead of opening another. */
function bind(trx: Kysely<Database>, caps: BoundCaps, pending: JobEvent[]): StoreTx {
  const joined: Transact = (fn) => fn(trx);
  return {
    identity: new SqlIdentityStore(trx, joined),
    jobs: new SqlJobStore(trx, joined, caps.fusedWrites),
    // Events wait for the commit: a rolled-back change announces nothing.
    queue: new SqlQueueStore(trx, caps, (event) => pending.push(event)),
    billing: new SqlBillingStore(trx, joined, caps.fusedWrites),
    nodeApps: new SqlNodeAppStore(trx, joined),
    webhooks: new SqlWebhookStore(trx, joined, caps.skipLocked),
    idempotency: new SqlIdempotencyStore(trx, joined, caps.skipLocked),
    assets: new SqlAssetStore(trx, joined, caps.rowLocks),
    styles: new SqlStyleStore(trx, joined, caps.rowLocks),
    workerTokens: new SqlWorkerTokenStore(trx),
    upstreams: new SqlUpstreamStore(trx),
    tokenBudgets: new SqlTokenBudgetStore(trx),
    savepoint: async (fn) => {
      // One at a time per transaction (its statements run in sequence), so one name serves.
      const sent = pending.length;
      await trx.executeQuery(SAVEPOINT);
      try {
        const out = await fn();
        await trx.executeQuery(RELEASE);
        return out;
      } catch (err) {
        await trx.executeQuery(ROLLBACK_TO);
        await trx.executeQuery(RELEASE);
        pending.length = sent;
        throw err;
      }
    },
  };
}

/**
 * Migrates a freshly opened database to the latest schema and assembles the Store on it. Each
 * backend supplies only its connection and its write transaction.
 */
export async function createSqlStore(backend: SqlBackend): Promise<Store> {
  const { db, transact, migrationsNeedWriteLock, skipLocked, rowLocks, sendEvent, listen, publish, closeExtra } = backend;
  const caps: BoundCaps = { skipLocked, rowLocks, ...(sendEvent ? { sendEvent } : {}), fusedWrites: backend.fusedWrites ?? false };
  const { error, results } = migrationsNeedWriteLock
    ? await transact((trx) => new Migrator({ db: trx, provider: migrationProvider, disableTransactions: true }).migrateToLatest())
    : await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error instanceof Error ? error : new Error(String(error));
  }
  // New tables and indexes have no statistics until analysed: without them the planner may pick a
  // scan where an index exists. Only when a migration ran; both backends bound the cost (SQLite by
  // its analysis_limit, PostgreSQL by sampling), and autovacuum / PRAGMA optimize keep them fresh.
  if (results?.some((r) => r.status === 'Success')) await sql`ANALYZE`.execute(db);
  const listeners = new Set<(event: JobEvent) => void>();
  const announce = (event: JobEvent) => {
    for (const fn of listeners) fn(event);
    publish?.(event);
  };
  return {
    identity: new SqlIdentityStore(db, transact),
    jobs: new SqlJobStore(db, transact, caps.fusedWrites),
    queue: new SqlQueueStore(db, caps, announce),
    billing: new SqlBillingStore(db, transact, caps.fusedWrites),
    nodeApps: new SqlNodeAppStore(db, transact),
    webhooks: new SqlWebhookStore(db, transact, caps.skipLocked),
    idempotency: new SqlIdempotencyStore(db, transact, caps.skipLocked),
    assets: new SqlAssetStore(db, transact, caps.rowLocks),
    styles: new SqlStyleStore(db, transact, caps.rowLocks),
    workerTokens: new SqlWorkerTokenStore(db),
    upstreams: new SqlUpstreamStore(db),
    tokenBudgets: new SqlTokenBudgetStore(db),
    routes: new SqlRouteStore(db, transact, rowLocks),
    openaiVideos: new SqlOpenAiVideoStore(db),
    parallelWrites: rowLocks,
    stats: new SqlQueueStatsStore(db),
    retention: new SqlRetentionStore(db, transact, caps.skipLocked),
    async transaction(fn) {
      const pending: JobEvent[] = [];
      const out = await transact((trx) => fn(bind(trx, caps, pending)));
      pending.forEach(announce);
      return out;
    },
    onEvent(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async probe(now) {
      await transact((trx) =>
        trx
          .insertInto('health_probes')
          .values({ id: 'readyz', at: now })
          .onConflict((oc) => oc.column('id').doUpdateSet({ at: now }))
          .execute(),
      );
      // Kysely's own bookkeeping table: every migration it has applied, by name.
      const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
      const names = new Set(applied.rows.map((r) => r.name));
      return {
        pendingMigrations: MIGRATION_NAMES.filter((n) => !names.has(n)),
        unknownMigrations: [...names].filter((n) => !MIGRATION_NAMES.includes(n)).sort(),
      };
    },
    ...(listen ? { listen } : {}),
    ...(backend.backup ? { backup: backend.backup } : {}),
    close: async () => {
      await closeExtra?.();
      await db.destroy();
    },
  };
}
