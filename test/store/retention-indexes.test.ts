import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/**
 * Each retention sweep seeks the front of an index (migration 0016), never scans its table: the
 * statements as retention-queries.ts and asset-queries.ts write them, planned by SQLite. (On
 * PostgreSQL the same seeks were checked with EXPLAIN ANALYZE on 100k jobs: notes of issue 20.)
 */
const SWEEPS: [string, string, RegExp][] = [
  [
    'outputs due',
    'SELECT id, status FROM jobs WHERE outputs_expired_at IS NULL AND completed_at <= 1 ORDER BY completed_at LIMIT 500',
    /SEARCH jobs USING INDEX jobs_outputs_due \(completed_at<\?\)/,
  ],
  [
    'jobs due',
    `SELECT j.id, j.status FROM jobs j WHERE j.completed_at <= 1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.job_id = j.id AND d.state = 'pending') ORDER BY j.completed_at LIMIT 500`,
    /SEARCH j USING INDEX jobs_completed \(completed_at<\?\).*SEARCH d USING INDEX webhook_deliveries_job \(job_id=\?\)/,
  ],
  ['live assets due', 'SELECT workspace_id, id FROM assets WHERE deleted_at IS NULL AND created_at <= 1 ORDER BY created_at LIMIT 500', /SEARCH assets USING INDEX assets_live_created \(created_at<\?\)/],
  [
    'tombstones',
    "SELECT id, workspace_id, deleted_at FROM assets WHERE deleted_at IS NOT NULL AND (deleted_at, id) > (1, 'a') ORDER BY deleted_at, id LIMIT 500",
    /SEARCH assets USING COVERING INDEX assets_tombstones \(\(deleted_at,id\)>\(\?,\?\)\)|SEARCH assets USING INDEX assets_tombstones \(\(deleted_at,id\)>\(\?,\?\)\)/,
  ],
  [
    "a workspace's oldest unfinished job",
    "SELECT created_at FROM jobs WHERE workspace_id = 'w' AND status = 'queued' ORDER BY created_at LIMIT 1",
    /SEARCH jobs USING COVERING INDEX jobs_workspace_status \(workspace_id=\? AND status=\?\)/,
  ],
  [
    'webhook logs due',
    "SELECT id FROM webhook_deliveries WHERE state = 'delivered' AND created_at <= 1 ORDER BY created_at LIMIT 500",
    /SEARCH webhook_deliveries USING INDEX webhook_deliveries_state_created \(state=\? AND created_at<\?\)/,
  ],
  ['idempotency keys due', 'SELECT id FROM idempotency_keys WHERE created_at <= 1 ORDER BY created_at LIMIT 500', /SEARCH idempotency_keys USING INDEX idempotency_keys_created \(created_at<\?\)/],
  ['writes by id', "DELETE FROM jobs WHERE id IN ('a', 'b')", /SEARCH jobs USING COVERING INDEX sqlite_autoindex_jobs_1 \(id=\?\)/],
];

describe('the retention sweeps seek on SQLite', () => {
  it.each(SWEEPS)('%s', async (_name, query, plan) => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-ret-idx-'));
    try {
      const store = await openSqliteStore(join(dir, 'm.db'));
      await store.close();
      const db = new SQLite(join(dir, 'm.db'));
      try {
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${query}`).all() as { detail: string }[];
        const detail = rows.map((r) => r.detail).join(' | ');
        expect(detail).toMatch(plan);
        expect(detail).not.toMatch(/SCAN (jobs|j|assets|webhook_deliveries|idempotency_keys)\b/);
        expect(detail).not.toMatch(/TEMP B-TREE/);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
