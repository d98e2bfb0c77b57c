import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/app/runtime.js';
import type { JobWorker } from '../../src/app/workers.js';
import { loadConfig } from '../../src/config/config.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestApp, generate, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends, sqliteBackend } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';
import { openEvents } from '../helpers/sse.js';
import { B1, MINIMAL } from './generate-support.js';

/**
 * Waiting across processes: the job runs in another runtime on the same database (PostgreSQL
 * NOTIFY; SQLite wake sockets) or in another OS process on the same SQLite file. The API's clock
 * never moves, so its waiters never poll: only the other process's change events can wake them.
 */
describe.each(backends)('a wait and a stream woken by another runtime on $name', (backend) => {
  let db: Awaited<ReturnType<Backend['create']>>;
  let t: TestApp;
  let other: { store: Store; jobs: JobWorker; stop: () => Promise<void> };

  beforeEach(async () => {
    db = await backend.create();
    // The API's runtime, with no worker of its own.
    t = await createTestApp({ backend: { ...backend, create: async () => ({ open: db.open, drop: async () => undefined }) } });
    // Another runtime on the same database runs the jobs, on the real clock: another machine.
    const store = await db.open();
    const runtime = await createRuntime({ ...loadConfig({ env: {} }), dataDir: t.dir, minFreeDiskBytes: 0 }, { store, outputs: t.outputs });
    const jobs = await runtime.createJobWorker(silentLog, { engine: new ScriptedEngine(), concurrency: 1, pollMs: 50 });
    const stop = await runtime.services.signals.hearOthers();
    jobs.worker.start();
    other = { store, jobs, stop };
  });
  afterEach(async () => {
    await other.jobs.worker.stop(0);
    await other.jobs.close();
    await other.stop();
    await other.store.close();
    await t.close();
    await db.drop();
  });

  it('answers Prefer: wait with the job the other runtime completed', async () => {
    const res = await generate(t, B1, MINIMAL[B1], { prefer: 'wait=30' });
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.json()).toMatchObject({ status: 'completed', result: { urls: [expect.any(String)] } });
  });

  it('streams every status the other runtime wrote, then the end', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const id = ((await generate(t, B1, MINIMAL[B1])).json() as Json).job_id as string;
    const s = await openEvents(base, `/jobs/${id}/events`, t.token);
    try {
      const events = await s.eventsUntil((e) => e.event === 'end');
      expect(events.map((e) => e.data.status)).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed']);
    } finally {
      s.close();
    }
  });
});

const distStore = fileURLToPath(new URL('../../dist/store/sqlite/sqlite-store.js', import.meta.url));

describe('a wait woken by another OS process on the same SQLite file', () => {
  let dir: string;
  let t: TestApp;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediagen-wait-'));
    const file = join(dir, 'mediagen.db');
    t = await createTestApp({ backend: { ...sqliteBackend, create: async () => ({ open: () => openSqliteStore(file), drop: async () => undefined }) } });
  });
  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the job the other process moved to completed', async () => {
    const go = join(dir, 'go');
    // The other process: waits for `go`, then claims the job and moves it to its end, as a worker's store calls do.
    const script = `
      import { openSqliteStore } from ${JSON.stringify(distStore)};
      import { existsSync } from 'node:fs';
      const s = await openSqliteStore(${JSON.stringify(join(dir, 'mediagen.db'))});
      try {
        while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 5));
        const now = Date.now() * 1000;
        const c = await s.queue.claim({ leaseId: 'lease', leaseExpiresAt: now + 30e6, outputKey: 'k'.repeat(32), now });
        for (const m of ['start', 'markSampling']) await s.queue.move(m, { id: c.id, leaseId: 'lease', now });
        await s.queue.move('complete', { id: c.id, leaseId: 'lease', patch: { result: { urls: ['/outputs/${'k'.repeat(32)}/o.png'] } }, now });
      } finally { await s.close(); }
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const pending = generate(t, B1, MINIMAL[B1], { prefer: 'wait=30' });
    await waitFor(async () => t.services.waits.holding(t.workspaceId).waits === 1, 'the wait to start');
    writeFileSync(go, '');
    const res = await pending;
    expect(await exited, stderr).toBe(0);
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.json()).toMatchObject({ status: 'completed', result: { urls: [`http://mediagen.test/outputs/${'k'.repeat(32)}/o.png`] } });
  });
});
