import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { api, cleanup, startServer, tempDir } from './binary.js';

const MODEL = 'image/vendor-b/model-b-1';
// The default balance ($10) covers about 250 creates of this model: the kill comes well before.
const IN_FLIGHT = 24;

type Row = Record<string, unknown>;

/**
 * Group commit under a crash: creates pour in, batched into shared transactions, and the server is
 * SIGKILLed in the middle. No answer precedes its commit, so every answered job must be stored; no
 * batch is half written, so every stored job has exactly one hold and no hold lacks its job; the
 * running admission counts equal a recount. After a restart every stored job runs and is charged once.
 */
describe('creates killed mid-batch (compiled binary, SQLite)', { timeout: 120_000 }, () => {
  afterEach(cleanup);

  it('every answered create exists, nothing half-written survives, and each job is billed once after the restart', async () => {
    const dir = tempDir();
    const args = ['--port', '0', '--data-dir', dir, '--engine-latency-ms', '0', '--worker-concurrency', '8', '--max-concurrent-jobs', '100000', '--max-backlogged-jobs', '0', '--lease-ms', '1000', '--poll-interval-ms', '100'];
    const first = await startServer(args);
    const [, token] = await first.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const answered: string[] = [];
    let stop = false;
    const pour = async () => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await api(first.url, `/generate/${MODEL}`, token!, { method: 'POST', body: { prompt: `p${i}` } });
          if (r.status === 200) answered.push(r.body.job_id as string);
        } catch {
          return; // the server is gone
        }
      }
    };
    const clients = Array.from({ length: IN_FLIGHT }, pour);
    while (answered.length < 80) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    stop = true;
    await first.exited();
    await Promise.all(clients);

    const read = <T,>(fn: (db: SQLite.Database) => T): T => {
      const db = new SQLite(join(dir, 'mediagen.db'), { readonly: true });
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    const stored = read((db) => db.prepare('SELECT id FROM jobs').all() as { id: string }[]).map((r) => r.id);
    expect(new Set(stored).size).toBe(stored.length);
    for (const id of answered) expect(stored).toContain(id);
    read((db) => {
      const holds = db.prepare(`SELECT job_id, COUNT(*) AS n FROM ledger_entries WHERE kind = 'hold' GROUP BY job_id`).all() as Row[];
      expect(holds.map((h) => h.job_id).sort()).toEqual([...stored].sort());
      expect(holds.every((h) => h.n === 1)).toBe(true);
      const counts = db.prepare(`SELECT active_jobs, backlogged_jobs, (SELECT COUNT(*) FROM jobs j WHERE j.workspace_id = w.id AND j.status IN ('queued','scheduled','processing','sampling','intermediate-complete')) AS recount FROM workspaces w`).all() as Row[];
      for (const c of counts) expect(c.active_jobs).toBe(c.recount);
    });

    const second = await startServer(args);
    await second.waitForStdout(/^mediagen: running up to/m);
    const until = Date.now() + 90_000;
    for (;;) {
      const left = read((db) => (db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE status <> 'completed'`).get() as Row).n as number);
      if (left === 0) break;
      if (Date.now() > until) throw new Error(`${left} jobs did not complete after the restart`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    read((db) => {
      const charges = db.prepare(`SELECT job_id, COUNT(*) AS n FROM ledger_entries WHERE kind = 'charge' GROUP BY job_id`).all() as Row[];
      expect(charges.map((c) => c.job_id).sort()).toEqual([...stored].sort());
      expect(charges.every((c) => c.n === 1)).toBe(true);
      const [w] = db.prepare('SELECT active_jobs, backlogged_jobs FROM workspaces').all() as Row[];
      expect(w).toEqual({ active_jobs: 0, backlogged_jobs: 0 });
    });
  });
});
