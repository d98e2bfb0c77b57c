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
