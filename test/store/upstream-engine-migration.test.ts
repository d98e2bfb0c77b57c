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
const PROVIDER_JOB = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
const COMFY_JOB = '1b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';

/** A store migrated up to 0018, with the rows 0017's code wrote: a provider's bare name, a ComfyUI engine's id. */
async function upgraded(db: Kysely<unknown>, open: () => Promise<Store>): Promise<Store> {
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo('0018_admission_counts');
    if (error) throw error;
    await sql`INSERT INTO workspaces (id, name, max_concurrent_jobs, max_backlogged_jobs, created_at) VALUES ('w', 'w', 2, 2, ${T0})`.execute(db);
    await sql`INSERT INTO api_users (id, workspace_id) VALUES ('u', 'w')`.execute(db);
    for (const [id, provider, upstreamId, state, at] of [
      [PROVIDER_JOB, 'replicate', 'pred-1', { handle: { id: 'pred-1' }, status: 'processing' }, T0],
      [COMFY_JOB, 'comfyui:gpu', 'prompt-1', { promptId: 'prompt-1', clientId: 'c-1' }, T0 + 1],
    ] as const) {
      await sql`INSERT INTO jobs (id, workspace_id, api_user_id, type, status, created_at, updated_at, request)
                VALUES (${id}, 'w', 'u', 'image/vendor-b/model-b-1', 'sampling', ${at}, ${at}, '{}')`.execute(db);
      await sql`INSERT INTO job_upstreams (job_id, provider, upstream_id, state, updated_at)
                VALUES (${id}, ${provider}, ${upstreamId}, ${JSON.stringify(state)}, ${T0})`.execute(db);
    }
  } finally {
    await db.destroy();
  }
  return open();
}

/** Every row is kept, and names its engine as a binding does: the provider's gains its kind. */
async function expectRenamed(store: Store): Promise<void> {
  try {
    expect(await store.upstreams.find(PROVIDER_JOB)).toEqual({ jobId: PROVIDER_JOB, engine: 'provider:replicate', id: 'pred-1', state: { handle: { id: 'pred-1' }, status: 'processing' }, updatedAt: T0 });
    expect(await store.upstreams.find(COMFY_JOB)).toEqual({ jobId: COMFY_JOB, engine: 'comfyui:gpu', id: 'prompt-1', state: { promptId: 'prompt-1', clientId: 'c-1' }, updatedAt: T0 });
  } finally {
    await store.close();
  }
}

describe('migration 0019 on a store with engine state stored under `provider`', () => {
  it('renames the column to engine and keeps every row, a bare provider name becoming provider:<name> (SQLite)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-0019-'));
    const file = join(dir, 'mediagen.db');
    try {
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
      await expectRenamed(await upgraded(db, () => openSqliteStore(file)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('renames the column to engine and keeps every row, a bare provider name becoming provider:<name> (PostgreSQL)', async () => {
    const database = await createPostgresDatabase();
    try {
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }) });
      await expectRenamed(await upgraded(db, () => openPostgresStore(database.url, { poolSize: 2 })));
    } finally {
      await database.drop();
    }
  });
});
