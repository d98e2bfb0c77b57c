import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import { migrationProvider } from '../sql/migrations.js';
import { SqlIdentityStore } from '../sql/identity-queries.js';
import { SqlJobStore } from '../sql/job-queries.js';
import type { Transact } from '../sql/transact.js';

/**
 * The shared store for scaled-out deployments: any number of api and worker processes on one
 * PostgreSQL database. Same query modules as SQLite; only connection and transactions differ.
 */
export async function openPostgresStore(url: string, opts: { poolSize?: number } = {}): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Row locks taken by the statements themselves serialise what must be serial; READ COMMITTED suffices.
  const transact: Transact = (fn) => db.transaction().execute(fn);

  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
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
