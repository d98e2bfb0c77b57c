import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { CompiledQuery } from 'kysely';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { RUNNING_JOBS_PREDICATE } from '../../src/store/sql/migrations/0025-running-jobs.js';
import { RUNNING_STATUSES } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import { T0 } from '../helpers/store-fixture.js';
import { CLAIM } from '../../src/store/sql/claim-statement.js';
import type { ClaimShape } from '../../src/store/sql/claim-statement.js';
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
    const plan = (await sqliteClaimPlan({ count: 2, types: { except: ['remote/a'] }, queuedBefore: false, skipLocked: false })).filter((r) => r.parent === 0);
    expect(plan.map((r) => r.detail)).toContain('SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)');
    expect(plan.map((r) => r.detail).join(' | ')).not.toMatch(/SEARCH jobs USING INDEX jobs_status/);
  });

  it("on SQLite, a claim counts each workspace's running jobs by seeks of jobs_workspace_status, one per running status (0025's index is PostgreSQL's)", async () => {
    expect(RUNNING_JOBS_PREDICATE).toEqual(RUNNING_STATUSES);
    const plan = await sqliteClaimPlan({ count: 1, types: undefined, queuedBefore: false, skipLocked: false });
    expect(plan.map((r) => r.detail)).toContain('SEARCH r USING COVERING INDEX jobs_workspace_status (workspace_id=? AND status=?)');
  });

  it.runIf(TEST_DATABASE_URL)("on PostgreSQL, a claim counts a busy workspace's running jobs along the index of running jobs, in its custom and its generic plan", async () => {
    const made = await createPostgresDatabase({ migrated: true });
    const store = await openPostgresStore(made.url, { poolSize: 1 });
    const client = new pg.Client({ connectionString: made.url });
    try {
      // A workspace with two thousand ended jobs and one queued: the shape that made the planner
      // read the whole workspace's range of jobs_workspace_status to count the few running.
      const apiUserId = newId();
      const ws = (await store.identity.createWorkspace({ id: newId(), name: 'w', ownerEmail: 'o@w.test', apiUserId, maxConcurrentJobs: 10_000, maxBackloggedJobs: 0, now: T0 }))!;
      const job = () => ({ id: newId(), workspaceId: ws.id, apiUserId, type: 'image/vendor-b/model-b-1', status: 'queued' as const, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'o@w.test' });
      for (let i = 0; i < 20; i++) {
        for (const j of await store.jobs.insertJobs(Array.from({ length: 100 }, job), T0 + i * 1000)) await store.queue.move('cancel', { id: j.id, now: T0 + i * 1000 + 1 });
      }
      await store.jobs.insertJobs([job()], T0 + 100_000);
      await client.connect();
      await client.query('ANALYZE');
      const seen: CompiledQuery[] = [];
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: made.url, max: 1 }) }), log: (e) => void seen.push(e.query) });
      try {
        await CLAIM.execute(db, { now: T0 + 200_000, leaseExpiresAt: T0 + 300_000 }, { count: 8, types: undefined, queuedBefore: false, skipLocked: true }, Array.from({ length: 8 }, (_, i) => ({ leaseId: `l${i}`, outputKey: `k${i}` })));
      } finally {
        await db.destroy();
      }
      const claim = seen.at(-1)!;
      const values = claim.parameters as unknown[];
      const custom = (await client.query(`EXPLAIN ${claim.sql}`, values)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      expect(custom).toMatch(/jobs_workspace_running on jobs r/);
      await client.query(`PREPARE claim AS ${claim.sql}`);
      await client.query('SET plan_cache_mode = force_generic_plan');
      const args = values.map((v) => (typeof v === 'number' ? String(v) : client.escapeLiteral(String(v)))).join(', ');
      const generic = (await client.query(`EXPLAIN EXECUTE claim(${args})`)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      expect(generic).toMatch(/jobs_workspace_running on jobs r/);
    } finally {
      await client.end();
      await store.close();
      await made.drop();
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

/** SQLite's plan of the claim of `shape` on a fresh, empty store. */
async function sqliteClaimPlan(shape: ClaimShape): Promise<{ parent: number; detail: string }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-idx-'));
  try {
    const store = await openSqliteStore(join(dir, 'm.db'));
    await store.close();
    const sqlite = new SQLite(join(dir, 'm.db'));
    const seen: CompiledQuery[] = [];
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log: (e) => void seen.push(e.query) });
    try {
      const leases = Array.from({ length: shape.count }, (_, i) => ({ leaseId: `l${i}`, outputKey: `k${i}` }));
      await CLAIM.execute(db, { now: 1, leaseExpiresAt: 2 }, shape, leases);
      const claim = seen.at(-1)!;
      return sqlite.prepare(`EXPLAIN QUERY PLAN ${claim.sql}`).all(...(claim.parameters as unknown[])) as { parent: number; detail: string }[];
    } finally {
      await db.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
