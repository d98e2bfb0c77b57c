import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WRITE_PROBE_FILE } from '../../src/outputs/disk/disk-check.js';
import { backends } from '../helpers/backends.js';
import { errorOf } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { claimNow, png, remoteApp, remoteJob, workerToken, wpost, wput } from '../helpers/remote-worker.js';

/** Output uploads and completion (docs/workers.md, "Upload", "Complete"): storage, leases, what is kept. */
describe.each(backends)('worker outputs on $name', (backend) => {
  let t: TestApp;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('refuses an upload with 503 and Retry-After while the data dir cannot take writes; progress and complete go on', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediagen-guard-'));
    t = await remoteApp({ backend, storage: { dir, minFreeBytes: 0 } });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    expect((await wput(t, token, id, 'a.png', job!.lease_id, await png())).statusCode).toBe(201);
    // The data dir stops taking writes: its write probe cannot be written.
    rmSync(join(dir, WRITE_PROBE_FILE), { force: true });
    mkdirSync(join(dir, WRITE_PROBE_FILE));
    t.clock.advance(1_000);
    const refused = await wput(t, token, id, 'b.png', job!.lease_id, await png());
    expect(errorOf(refused, 503)).toMatch(/cannot store uploaded outputs right now/);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'sampling' })).statusCode).toBe(200);
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'a.png' }] })).statusCode).toBe(200);
  });

  it('an upload renews the lease', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    const claimedUntil = (await t.store.queue.findJob(id))!.leaseExpiresAt!;
    t.clock.advance(20_000);
    expect((await wput(t, token, id, 'a.png', job!.lease_id, await png())).statusCode).toBe(201);
    expect((await t.store.queue.findJob(id))!.leaseExpiresAt).toBe(claimedUntil + 20_000_000);
  });
});
