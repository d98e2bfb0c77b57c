import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from './store.js';

export const SQLITE_FILE = 'mediagen.db';

/**
 * PostgreSQL when a database URL is given, otherwise the embedded SQLite file in the data dir.
 * Each backend is imported only when used, so a process loads one database driver.
 */
export async function openStore(opts: { databaseUrl?: string; dataDir: string }): Promise<Store> {
  if (opts.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore(opts.databaseUrl);
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
  return openSqliteStore(join(opts.dataDir, SQLITE_FILE));
}

/**
 * Whether a store is already there, found without making one: the SQLite file in the data dir, or
 * our migrations in the PostgreSQL database's migrations table. `openStore` creates and migrates whatever it
 * opens, so a caller that must not create one (the admin CLI, against a mistyped --data-dir) asks first.
 */
export async function storeExists(opts: { databaseUrl?: string; dataDir: string }): Promise<boolean> {
  if (opts.databaseUrl) {
    const { postgresStoreExists } = await import('./postgres/postgres-store.js');
    return postgresStoreExists(opts.databaseUrl);
  }
  return existsSync(join(opts.dataDir, SQLITE_FILE));
}
