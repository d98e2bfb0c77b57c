import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const distStore = fileURLToPath(new URL('../../dist/store/sqlite/sqlite-store.js', import.meta.url));
const T0 = Date.UTC(2026, 10, 22) * 1000;

/**
 * Runs `body` in `n` processes that each open the store on `file`, then wait until the file `go`
 * exists so that all of them start the body together. Resolves with each process's stdout.
 */
async function inProcesses(n: number, file: string, go: string, body: string): Promise<string[]> {
  const script = `
    import { openSqliteStore } from ${JSON.stringify(distStore)};
    import { existsSync } from 'node:fs';
    import { randomUUID } from 'node:crypto';
    while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 2));
    const s = await openSqliteStore(${JSON.stringify(file)});
    try { ${body} } finally { await s.close(); }
  `;
  const runs = Array.from({ length: n }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    return new Promise<string>((resolve, reject) =>
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`)))),
    );
  });
  // Every process is spawned and waiting before the barrier opens.
  await new Promise((r) => setTimeout(r, 400));
  writeFileSync(go, '');
  return Promise.all(runs);
}

/** The server and the admin CLI are separate processes on one SQLite file; all must be able to write. */
describe('sqlite store shared by several processes', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mediagen-proc-'));
    file = join(dir, 'mediagen.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('six processes opening a fresh file at once all migrate it without error', async () => {
    const outs = await inProcesses(6, file, join(dir, 'go'), `console.log(await s.identity.countWorkspaces());`);
    expect(outs.map((o) => o.trim())).toEqual(['0', '0', '0', '0', '0', '0']);
  });

  it('creating the same workspace name from four processes at once succeeds exactly once', async () => {
    const outs = await inProcesses(
      4,
      file,
      join(dir, 'go'),
      `const ws = await s.identity.createWorkspace({ id: randomUUID(), name: 'shared', ownerEmail: 'o@x.test', apiUserId: randomUUID(), maxConcurrentJobs: 4, maxBackloggedJobs: 100, now: ${T0} });
       console.log(ws ? 'created' : 'taken');`,
    );
    expect(outs.map((o) => o.trim()).sort()).toEqual(['created', 'taken', 'taken', 'taken']);
  });

  it('interleaved job inserts from three processes keep creation times unique and increasing', async () => {
    const store = await openSqliteStore(file);
    const ws = (await store.identity.createWorkspace({ id: 'w1', name: 'w', ownerEmail: 'o@w.test', apiUserId: 'u1', maxConcurrentJobs: 4, maxBackloggedJobs: 100, now: T0 }))!;
    try {
      await inProcesses(
        3,
        file,
        join(dir, 'go'),
        `for (let i = 0; i < 100; i++) {
           await s.jobs.insertJob({ id: randomUUID(), workspaceId: ${JSON.stringify(ws.id)}, apiUserId: 'u1', type: 'video/vendor-f/model-f', status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' }, ${T0});
         }`,
      );
      const all = await store.jobs.listJobs({ apiUserId: 'u1', limit: 1000 });
      expect(all).toHaveLength(300);
      const times = all.map((j) => j.createdAt);
      expect(new Set(times).size).toBe(300);
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    } finally {
      await store.close();
    }
  });

  it('wakes another process at once: a job queued here is claimed there within a second, a cancel reaches it as soon as it commits', async () => {
    const store = await openSqliteStore(file);
    const ws = (await store.identity.createWorkspace({ id: 'w1', name: 'w', ownerEmail: 'o@w.test', apiUserId: 'u1', maxConcurrentJobs: 4, maxBackloggedJobs: 100, now: T0 }))!;
    // The other process never polls: only a wake-up makes it claim, or hear of a cancel.
    const script = `
      import { openSqliteStore } from ${JSON.stringify(distStore)};
      const s = await openSqliteStore(${JSON.stringify(file)});
      await s.listen(async (e) => {
        if (e.kind === 'queued') {
          const job = await s.queue.claim({ leaseId: 'l1', leaseExpiresAt: ${T0} + 60e6, outputKey: 'k1', now: ${T0} });
          console.log('claimed ' + (job ? job.id : 'nothing'));
        }
        if (e.kind === 'cancelled') { console.log('cancelled ' + e.jobId); await s.close(); }
      });
      console.log('listening');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const lines: Array<{ line: string; at: number }> = [];
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      for (const line of d.toString().split('\n').filter(Boolean)) lines.push({ line, at: performance.now() });
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const waitFor = async (prefix: string) => {
      for (let i = 0; i < 500 && !lines.some((l) => l.line.startsWith(prefix)); i++) await new Promise((r) => setTimeout(r, 10));
      const hit = lines.find((l) => l.line.startsWith(prefix));
      if (!hit) throw new Error(`no '${prefix}' from the other process: ${out} ${err}`);
      return hit;
    };
    try {
      await waitFor('listening');
      const id = randomUUID();
      const queuedAt = performance.now();
      await store.transaction(async (tx) => {
        await tx.jobs.insertJob({ id, workspaceId: ws.id, apiUserId: 'u1', type: 'video/vendor-f/model-f', status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' }, T0);
        await tx.queue.notify({ kind: 'queued' });
      });
      const claimed = await waitFor('claimed');
      expect(claimed.line).toBe(`claimed ${id}`);
      expect(claimed.at - queuedAt).toBeLessThan(1000);

      const cancelledAt = performance.now();
      await store.transaction(async (tx) => {
        await tx.queue.move('cancel', { id, now: T0 });
        await tx.queue.notify({ kind: 'cancelled', jobId: id });
      });
      const cancelled = await waitFor('cancelled');
      expect(cancelled.line).toBe(`cancelled ${id}`);
      expect(cancelled.at - cancelledAt).toBeLessThan(1000);
      // The other process closed its store: its wake socket is gone, and nothing keeps it alive.
      expect(await exited).toBe(0);
      expect(readdirSync(join(dir, 'wake')).filter((n) => n.endsWith('.sock'))).toEqual([]);
    } finally {
      child.kill();
      await store.close();
    }
  });
});
