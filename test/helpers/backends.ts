import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

/** A backend under test: opens fresh, empty stores (two handles may share one database). */
export interface Backend {
  readonly name: string;
  /** Lock waits are asynchronous, so two handles in one process can contend without deadlock. */
  readonly asyncLocks: boolean;
  /** Opens a new, empty database and returns a way to open more handles on it. */
  create(): Promise<{ open(): Promise<Store>; drop(): Promise<void> }>;
}

export const sqliteBackend: Backend = {
  name: 'sqlite',
  asyncLocks: false,
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-store-'));
    return {
      open: () => openSqliteStore(join(dir, 'mediagen.db')),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

/** TEST_DATABASE_URL names a server and a database to connect to for CREATE/DROP DATABASE. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** Creates a uniquely named database on the TEST_DATABASE_URL server; drop() removes it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new URL(TEST_DATABASE_URL!);
  const name = `mediagen_test_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export const postgresBackend: Backend = {
  name: 'postgres',
  asyncLocks: true,
  async create() {
    const db = await createPostgresDatabase();
    return { open: () => openPostgresStore(db.url, { poolSize: 5 }), drop: db.drop };
  },
};

/** Every backend the contract suite runs against here: SQLite always, PostgreSQL when configured. */
export const backends: Backend[] = TEST_DATABASE_URL ? [sqliteBackend, postgresBackend] : [sqliteBackend];
