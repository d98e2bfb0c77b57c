import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import { MIGRATION_NAMES } from '../sql/migrations/index.js';
import { createSqlStore } from '../sql/sql-store.js';
import { PgListener } from './pg-listener.js';
import { nameStatements } from './prepared-statements.js';
import { JOB_EVENTS_CHANNEL, pgNotify } from './pg-notify.js';
import type { Transact } from '../sql/transact.js';

/**
 * The shared store for scaled-out deployments: any number of server processes on one PostgreSQL
 * database. Same query modules as SQLite; only connection and transactions differ.
 */
export async function openPostgresStore(url: string, opts: { poolSize?: number } = {}): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    // BIGINT columns hold microsecond times, far below 2^53: read them as numbers, as SQLite does.
    types: { getTypeParser: (oid: number, format?: string) => (oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) },
  });
  // An idle connection dropped by the server (a restart, a failover) is replaced by the pool; without
  // a listener its 'error' event would end the process.
  pool.on('error', () => undefined);
  nameStatements(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Row locks taken by the statements themselves serialise what must be serial; READ COMMITTED suffices.
  const transact: Transact = (fn) => db.transaction().execute(fn);

  // This store's events reach its own process at commit (Store.onEvent); its LISTEN drops their echo.
  const origin = randomUUID();
  const listener = new PgListener(url, JOB_EVENTS_CHANNEL, origin);
  return createSqlStore({
    db,
    transact,
    migrationsNeedWriteLock: false,
    skipLocked: true,
    rowLocks: true,
    sendEvent: (conn, event) => pgNotify(conn, event, origin),
    fusedWrites: true,
    listen: (fn) => listener.listen(fn),
    closeExtra: () => listener.close(),
  });
}

/**
 * Whether the database holds a store: Kysely's migrations table is there and records our first
 * migration (the table's name is Kysely's default, so another Kysely app's database has one too).
 */
export async function postgresStoreExists(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  // A connection dropped later must not end the process (as for the pool).
  client.on('error', () => undefined);
  await client.connect();
  try {
    const table = await client.query<{ present: boolean }>(`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`);
    if (table.rows[0]?.present !== true) return false;
    const ours = await client.query('SELECT 1 FROM kysely_migration WHERE name = $1', [MIGRATION_NAMES[0]]);
    return ours.rowCount === 1;
  } finally {
    await client.end();
  }
}
