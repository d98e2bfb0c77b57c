import { join } from 'node:path';
import type { Store } from './store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { openPostgresStore } from './postgres/postgres-store.js';

export const SQLITE_FILE = 'mediagen.db';

/** PostgreSQL when a database URL is given, otherwise the embedded SQLite file in the data dir. */
export function openStore(opts: { databaseUrl?: string; dataDir: string }): Promise<Store> {
  return opts.databaseUrl ? openPostgresStore(opts.databaseUrl) : openSqliteStore(join(opts.dataDir, SQLITE_FILE));
}
