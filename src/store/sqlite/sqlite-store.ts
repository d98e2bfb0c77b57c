import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../schema.js';
import type { JobEvent, Store } from '../store.js';
import { createSqlStore } from '../sql/sql-store.js';
import { WakeSockets } from './wake-sockets.js';
import type { Transact } from '../sql/transact.js';

/** Kysely prepares every query anew; preparing was the largest cost of a request (docs/benchmarks.md). */
const STATEMENT_CACHE_SIZE = 500;

function withStatementCache(raw: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => raw.close(),
    prepare(sqlText: string): SQLite.Statement {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        // Statements are used one at a time: Kysely's driver holds its single connection per query.
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        stmt = raw.prepare(sqlText);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

/** Every write transaction's bracket, compiled once. */
const BEGIN_IMMEDIATE = CompiledQuery.raw('BEGIN IMMEDIATE');
const COMMIT = CompiledQuery.raw('COMMIT');
const ROLLBACK = CompiledQuery.raw('ROLLBACK');

/**
 * The embedded store: one SQLite file in WAL mode. The server and the admin CLI may have it open
 * at once; busy_timeout makes one wait for the other's write instead of failing. better-sqlite3 is
 * synchronous, so such a wait holds the whole process: every write transaction here is short.
 */
export async function openSqliteStore(file: string): Promise<Store> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const raw = new SQLite(file);
  // The wait first: switching a new file to WAL takes a lock that other processes opening it at the
  // same moment (four `admin` commands at once) would otherwise meet as SQLITE_BUSY at once.
  raw.pragma('busy_timeout = 5000');
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('synchronous = NORMAL');
  // ANALYZE reads at most this many rows per index, so analysing a large file stays quick.
  raw.pragma('analysis_limit = 1000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });

  // Kysely's SQLite driver holds its one connection for the whole callback, so statements of
  // other callers wait; BEGIN IMMEDIATE takes the file's write lock before the first read.
  const transact: Transact = (fn) =>
    db.connection().execute(async (conn) => {
      await conn.executeQuery(BEGIN_IMMEDIATE);
      try {
        const out = await fn(conn);
        await conn.executeQuery(COMMIT);
        return out;
      } catch (err) {
        // SQLite ends the transaction itself on some errors (SQLITE_FULL, SQLITE_IOERR): then
        // ROLLBACK fails too, and its "no transaction is active" must not hide the real cause.
        await conn.executeQuery(ROLLBACK).catch(() => undefined);
        throw err;
      }
    });

  // Other processes on this file (`--role api` beside `--role worker`) hear committed events at once.
  const wake = file === ':memory:' ? undefined : new WakeSockets(join(dirname(file), 'wake'));
  const store = await createSqlStore({
    db,
    transact,
    migrationsNeedWriteLock: true,
    skipLocked: false,
    rowLocks: false,
    ...(wake
      ? { listen: (fn: (event: JobEvent) => void) => wake.listen(fn), publish: (event: JobEvent) => wake.publish(event), closeExtra: () => wake.close() }
      : {}),
    backup: async (toFile) => {
      // VACUUM INTO reads one snapshot (a WAL reader: the server's writers go on) and writes a
      // compact file that is a complete database on its own, without a -wal beside it. It refuses a
      // file that exists and is not empty, so a backup never overwrites anything.
      raw.prepare('VACUUM INTO ?').run(toFile);
      return statSync(toFile).size;
    },
  });
  // SQLite's advice for a long-lived connection: refresh statistics of tables that grew or shrank a
  // lot since they were last analysed (quick, and nothing when none did).
  raw.pragma('optimize = 0x10002');
  return store;
}
