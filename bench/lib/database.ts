import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SQLITE_FILE } from '../../src/store/open-store.js';
import { NON_TERMINAL_STATUSES } from '../../src/domain/states.js';

export type BackendName = 'sqlite' | 'postgres';

/**
 * A fresh database of one backend for one bench run, and a raw SQL connection to it beside the
 * server's own store: seeding, reading job rows and counting statuses go through it, so they do
 * not depend on the store's interface. `?` placeholders on both backends.
 */
export interface BenchDatabase {
  readonly backend: BackendName;
  /** A temporary data dir: the SQLite file (on SQLite) and the outputs (on both). */
  readonly dataDir: string;
  /** The PostgreSQL database, undefined on SQLite. */
  readonly databaseUrl: string | undefined;
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Closes the raw connection, drops the database and removes the data dir. */
  drop(): Promise<void>;
}

export const DEFAULT_PG_URL = 'postgres://root@127.0.0.1:5432/postgres';

export function createSqliteDatabase(): BenchDatabase {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediagen-bench-'));
  let db: Database.Database | undefined;
  // Opened on first use: the server's store creates and migrates the file first.
  const raw = () => {
    if (!db) {
      db = new Database(join(dataDir, SQLITE_FILE));
      db.pragma('busy_timeout = 10000');
    }
    return db;
  };
  return {
    backend: 'sqlite',
    dataDir,
    databaseUrl: undefined,
    async query<T>(text: string, params: readonly unknown[] = []) {
      const stmt = raw().prepare(text);
      if (stmt.reader) return stmt.all(...params) as T[];
      stmt.run(...params);
      return [];
    },
    async drop() {
      db?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Creates `mediagen_bench_<random>` on the server of `adminUrl`; throws with the reason when the
 * server cannot be reached or refuses.
 */
export async function createPostgresDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `mediagen_bench_${randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  // An idle connection ended by the server (the DROP ... WITH (FORCE) of drop()) must not end the bench.
  pool.on('error', () => undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'mediagen-bench-'));
  return {
    backend: 'postgres',
    dataDir,
    databaseUrl: url.toString(),
    async query<T>(text: string, params: readonly unknown[] = []) {
      let n = 0;
      const res = await pool.query(text.replace(/\?/g, () => `$${++n}`), [...params]);
      return res.rows as T[];
    },
    async drop() {
      await pool.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A job's row, numbers as numbers (pg returns BIGINT as strings). */
export async function jobRow(db: BenchDatabase, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await db.query('SELECT * FROM jobs WHERE id = ?', [id]);
  return row;
}

export async function countJobs(db: BenchDatabase, statuses: readonly string[]): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM jobs WHERE status IN (${statuses.map(() => '?').join(', ')})`,
    statuses,
  );
  return Number(row?.n ?? 0);
}

/** Job statuses of a job not yet ended. */
export const UNFINISHED = NON_TERMINAL_STATUSES;
