import { Migrator } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import { SqlIdentityStore } from './identity-queries.js';
import { SqlJobStore } from './job-queries.js';
import { migrationProvider } from './migrations.js';
import type { Transact } from './transact.js';

/**
 * Migrates a freshly opened database to the latest schema and assembles the Store on it. Each
 * backend supplies only its connection and its write transaction.
 */
export async function createSqlStore(db: Kysely<Database>, transact: Transact): Promise<Store> {
  const { error } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error instanceof Error ? error : new Error(String(error));
  }
  return {
    identity: new SqlIdentityStore(db, transact),
    jobs: new SqlJobStore(db, transact),
    close: () => db.destroy(),
  };
}
