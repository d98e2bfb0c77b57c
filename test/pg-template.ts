import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated template database of this run, when TEST_DATABASE_URL is set. */
    pgTemplate: string | undefined;
  }
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Makes this run's migrated template database: migrated once, here in the global setup, before any
 * test process starts, so every PostgreSQL test database is a clone of it (test/helpers/backends.ts).
 * A unique name per run keeps concurrent runs on one server apart. Returns how to drop it.
 */
export async function createPgTemplate(serverUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `mediagen_tpl_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    // Opening the store migrates it; closing ends every connection, which a template must not have.
    const store = await openPostgresStore(url.toString(), { poolSize: 1 });
    await store.close();
  } catch (err) {
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    throw err;
  }
  return { name, drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
