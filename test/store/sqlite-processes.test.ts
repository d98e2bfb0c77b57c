import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
           await s.jobs.insertJob({ id: randomUUID(), workspaceId: ${JSON.stringify(ws.id)}, apiUserId: 'u1', type: 'video/vendor-f/model-f', status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false }, ${T0});
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
});
