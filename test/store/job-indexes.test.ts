import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Kysely, SqliteDialect } from 'kysely';
import type { CompiledQuery } from 'kysely';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLAIM } from '../../src/store/sql/claim-statement.js';
import type { Database } from '../../src/store/schema.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

/**
 * Remote claims (type IN), in-process claims (type NOT IN) and remote maintenance's overdue scan
 * (one type at a time) walk jobs by status and type in creation order: migration 0014's index.
 * GET /jobs?tag= walks one user's tag in creation order: migration 0023's.
 */
describe('jobs are indexed by status, type and creation', () => {
  it('on SQLite, and the overdue scan of one type uses the index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-idx-'));
    try {
      const store = await openSqliteStore(join(dir, 'm.db'));
      await store.close();
      const db = new SQLite(join(dir, 'm.db'), { readonly: true });
      try {
        const cols = db.prepare("SELECT name FROM pragma_index_info('jobs_status_type_created') ORDER BY seqno").all() as { name: string }[];
        expect(cols.map((c) => c.name)).toEqual(['status', 'type', 'created_at']);
        const plan = db
          .prepare("EXPLAIN QUERY PLAN SELECT * FROM jobs WHERE status IN ('queued','scheduled') AND type = ? AND (started_at < ? OR updated_at < ?) ORDER BY created_at LIMIT 100")
          .all('remote/a', 1, 1) as { detail: string }[];
        expect(plan.map((p) => p.detail).join(' ')).toMatch(/jobs_status_type_created/);
        // GET /jobs?tag= (0023): a seek of the user's tag, newest first, each job by its key.
        const tagged = db
          .prepare(
            'EXPLAIN QUERY PLAN SELECT j.id, j.status, j.result FROM job_tags AS g INNER JOIN jobs AS j ON j.id = g.job_id ' +
              'WHERE g.api_user_id = ? AND g.tag = ? AND g.created_at < ? ORDER BY g.created_at DESC LIMIT 101',
          )
          .all('u', 'team-a', 1) as { detail: string }[];
        expect(tagged.map((p) => p.detail)).toEqual([
          'SEARCH g USING INDEX job_tags_user_tag_created (api_user_id=? AND tag=? AND created_at<?)',
          'SEARCH j USING INDEX sqlite_autoindex_jobs_1 (id=?)',
        ]);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on SQLite, a claim's update is driven by the jobs it picked, not by a walk of every queued job", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-idx-'));
    try {
      const store = await openSqliteStore(join(dir, 'm.db'));
      await store.close();
      const sqlite = new SQLite(join(dir, 'm.db'));
      const seen: CompiledQuery[] = [];
      const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log: (e) => void seen.push(e.query) });
      try {
        await CLAIM.execute(db, { now: 1, leaseExpiresAt: 2 }, { count: 2, types: { except: ['remote/a'] }, queuedBefore: false, skipLocked: false }, [
          { leaseId: 'a', outputKey: 'a' },
          { leaseId: 'b', outputKey: 'b' },
        ]);
        const claim = seen.at(-1)!;
        const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${claim.sql}`).all(...(claim.parameters as unknown[])) as { parent: number; detail: string }[]).filter((r) => r.parent === 0);
        expect(plan.map((r) => r.detail)).toContain('SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)');
        expect(plan.map((r) => r.detail).join(' | ')).not.toMatch(/SEARCH jobs USING INDEX jobs_status/);
      } finally {
        await db.destroy();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(TEST_DATABASE_URL)('on PostgreSQL', async () => {
    const made = await createPostgresDatabase({ migrated: true });
    const client = new pg.Client({ connectionString: made.url });
    await client.connect();
    try {
      const r = await client.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'jobs' AND indexname = 'jobs_status_type_created'");
      expect(r.rows[0]?.indexdef).toMatch(/\(status, type, created_at\)/);
      const tags = await client.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'job_tags' AND indexname = 'job_tags_user_tag_created'");
      expect(tags.rows[0]?.indexdef).toMatch(/\(api_user_id, tag, created_at\)/);
    } finally {
      await client.end();
      await made.drop();
    }
  });
});
