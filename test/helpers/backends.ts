import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
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

/** Runs one statement on the TEST_DATABASE_URL server's admin database. */
export async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the TEST_DATABASE_URL server. */
export function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Creates a uniquely named database on the TEST_DATABASE_URL server; drop() removes it. With
 * `migrated`, it is a clone of the migrated template database the global setup made for this run
 * (CREATE DATABASE ... TEMPLATE copies the schema in one statement instead of running every
 * migration); without, it is empty, for tests of what a start does to a fresh database.
 */
export async function createPostgresDatabase(opts: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mediagen_test_${randomBytes(6).toString('hex')}`;
  const template = opts.migrated ? inject('pgTemplate') : undefined;
  // WAL_LOG (PostgreSQL 15's default) copies a small database without the checkpoint FILE_COPY forces.
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  return { url: databaseUrl(name), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export const postgresBackend: Backend = {
  name: 'postgres',
  asyncLocks: true,
  async create() {
    const db = await createPostgresDatabase({ migrated: true });
    return { open: () => openPostgresStore(db.url, { poolSize: 5 }), drop: db.drop };
  },
};

/** Every backend the contract suite runs against here: SQLite always, PostgreSQL when configured. */
export const backends: Backend[] = TEST_DATABASE_URL ? [sqliteBackend, postgresBackend] : [sqliteBackend];
