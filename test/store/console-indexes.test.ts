import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

/**
 * The reads the web console's endpoints added (issue 21) seek an index on both backends: the
 * workspace's deliveries newest first (webhook_deliveries_workspace), GET /jobs with a creation
 * window (jobs_user_created) and a job's ledger entries (ledger_job_kind). Each query as the store
 * writes it, with its parameters.
 */
const QUERIES: readonly { name: string; index: string; sql: string; params: unknown[] }[] = [
  {
    name: 'the workspace deliveries page',
    index: 'webhook_deliveries_workspace',
    sql: 'SELECT * FROM webhook_deliveries WHERE workspace_id = $1 AND created_at < $2 ORDER BY created_at DESC LIMIT 101',
    params: ['w', 1_000],
  },
  {
    name: 'the jobs window page',
    index: 'jobs_user_created',
    sql: 'SELECT id FROM jobs WHERE api_user_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at DESC LIMIT 101',
    params: ['u', 1, 1_000],
  },
  { name: "a job's ledger entries", index: 'ledger_job_kind', sql: 'SELECT * FROM ledger_entries WHERE job_id = $1', params: ['j'] },
];

describe("the console endpoints' queries are index-backed", () => {
  it('on SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-idx-'));
    try {
      await (await openSqliteStore(join(dir, 'm.db'))).close();
      const db = new SQLite(join(dir, 'm.db'), { readonly: true });
      try {
        for (const q of QUERIES) {
          const plan = db.prepare(`EXPLAIN QUERY PLAN ${q.sql.replace(/\$\d/g, '?')}`).all(...q.params) as { detail: string }[];
          const text = plan.map((p) => p.detail).join(' ');
          expect(text, q.name).toContain(q.index);
          // Read in index order: no sort step.
          expect(text, q.name).not.toMatch(/TEMP B-TREE/);
        }
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(TEST_DATABASE_URL)('on PostgreSQL (an index the planner can use once a table is large)', async () => {
    const made = await createPostgresDatabase({ migrated: true });
    const client = new pg.Client({ connectionString: made.url });
    await client.connect();
    try {
      // Empty tables are cheaper to scan; what matters is that an index serves the query at all.
      await client.query('SET enable_seqscan = off');
      for (const q of QUERIES) {
        const plan = (await client.query(`EXPLAIN ${q.sql}`, q.params)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
        expect(plan, q.name).toContain(q.index);
        expect(plan, q.name).not.toMatch(/\bSort\b/);
      }
    } finally {
      await client.end();
      await made.drop();
    }
  });
});
