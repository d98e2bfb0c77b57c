import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken, newId } from '../../src/lib/ids.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

const distStore = fileURLToPath(new URL('../../dist/store/sqlite/sqlite-store.js', import.meta.url));
const T0 = Date.UTC(2026, 10, 22) * 1000;

/** The server and the admin CLI are separate processes on one SQLite file; both must be able to write. */
describe('sqlite store shared by two processes', () => {
  let dir: string;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('interleaved job inserts from two processes keep creation times unique and increasing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediagen-proc-'));
    const file = join(dir, 'mediagen.db');
    store = await openSqliteStore(file);
    const ws = (await store.identity.createWorkspace({ id: newId(), name: 'w', ownerEmail: 'o@w.test', apiUserId: newId(), maxConcurrentJobs: 4, maxBackloggedJobs: 100, now: T0 }))!;
    await store.identity.insertToken({ id: newId(), workspaceId: ws.id, name: 't', tokenHash: hashToken('s'), createdBy: 'o@w.test', now: T0 });
    const apiUserId = (await store.identity.findTokenByHash(hashToken('s')))!.apiUserId;
    const job = () => ({ id: newId(), workspaceId: ws.id, apiUserId, type: 'video/vendor-f/model-f', status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false });

    const script = `
      import { openSqliteStore } from ${JSON.stringify(distStore)};
      import { randomUUID } from 'node:crypto';
      const s = await openSqliteStore(${JSON.stringify(file)});
      for (let i = 0; i < 150; i++) {
        await s.jobs.insertJob({ id: randomUUID(), workspaceId: ${JSON.stringify(ws.id)}, apiUserId: ${JSON.stringify(apiUserId)}, type: 'video/vendor-f/model-f', status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false }, ${T0});
      }
      await s.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    for (let i = 0; i < 150; i++) await store.jobs.insertJob(job(), T0);
    expect(await exited, stderr).toBe(0);

    const all = await store.jobs.listJobs({ apiUserId, limit: 1000 });
    expect(all).toHaveLength(300);
    const times = all.map((j) => j.createdAt);
    expect(new Set(times).size).toBe(300);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});
