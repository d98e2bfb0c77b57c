import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/store/sql/migrations/index.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

const T0 = Date.UTC(2026, 10, 22) * 1000;

/** A store migrated up to 0013 (before 0015) holding two jobs, then opened by this code. */
async function upgraded(db: Kysely<unknown>, open: () => Promise<Store>): Promise<Store> {
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo('0013_styles');
    if (error) throw error;
    await sql`INSERT INTO workspaces (id, name, max_concurrent_jobs, max_backlogged_jobs, created_at) VALUES ('w', 'w', 2, 2, ${T0})`.execute(db);
    await sql`INSERT INTO api_users (id, workspace_id) VALUES ('u', 'w')`.execute(db);
    for (const [id, status, at] of [
      ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', 'completed', T0 + 5],
      ['1b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', 'sampling', T0 + 7],
    ] as const) {
      await sql`INSERT INTO jobs (id, workspace_id, api_user_id, type, status, created_at, updated_at, request)
                VALUES (${id}, 'w', 'u', 'image/vendor-b/model-b-1', ${status}, ${at - 1}, ${at}, '{}')`.execute(db);
    }
  } finally {
    await db.destroy();
  }
  return open();
}

async function expectBackfilled(store: Store): Promise<void> {
  try {
    const done = await store.jobs.transitions('u', '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', 0, 10);
    const running = await store.jobs.transitions('u', '1b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', 0, 10);
    expect(done!.transitions.map(({ status, at }) => ({ status, at }))).toEqual([{ status: 'completed', at: T0 + 5 }]);
    expect(running!.transitions.map(({ status, at }) => ({ status, at }))).toEqual([{ status: 'sampling', at: T0 + 7 }]);
    expect((await store.jobs.getJob('u', '1b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'))!.requestId).toBeNull();
  } finally {
    await store.close();
  }
}

describe('migration 0015 on a store that already has jobs', () => {
  it('starts each job\'s history at its current status (SQLite)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-0015-'));
    const file = join(dir, 'mediagen.db');
    try {
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
      await expectBackfilled(await upgraded(db, () => openSqliteStore(file)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!TEST_DATABASE_URL)("starts each job's history at its current status (PostgreSQL)", async () => {
    const database = await createPostgresDatabase();
    try {
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }) });
      await expectBackfilled(await upgraded(db, () => openPostgresStore(database.url, { poolSize: 2 })));
    } finally {
      await database.drop();
    }
  });
});
