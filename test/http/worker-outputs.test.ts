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

  it('removes the uploaded files the completion does not list: the job serves exactly its result', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    for (const name of ['draft.png', 'preview.png', 'output.png', 'retry-2.png']) {
      expect((await wput(t, token, id, name, job!.lease_id, await png())).statusCode).toBe(201);
    }
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'intermediate-complete', preview: 'preview.png' })).statusCode).toBe(200);
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] })).statusCode).toBe(200);
    const key = (await t.store.queue.findJob(id))!.outputKey!;
    expect(await t.services.outputs.names(key)).toEqual(['output.png']);
  });

  it("refuses a completion whose main output is not of the model's kind (400 naming it); a right one completes", async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(64)]);
    expect((await wput(t, token, id, 'sound.wav', job!.lease_id, wav)).statusCode).toBe(201);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, await png())).statusCode).toBe(201);
    const wrong = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'sound.wav' }, { name: 'output.png' }] });
    expect(errorOf(wrong, 400)).toMatch(/^outputs\[0\]\.name: 'sound\.wav' is audio\/wav, but the main output of image\/vendor-a\/model-a-2\/medium is one of image\//);
    expect((await t.store.queue.findJob(id))!.status).not.toBe('completed');
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] })).statusCode).toBe(200);
  });

  it('refuses a duration_us past 24 hours with 400, and the job stays completable', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, await png())).statusCode).toBe(201);
    const huge = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png', duration_us: 86_400_000_001 }] });
    expect(errorOf(huge, 400)).toMatch(/duration_us/);
    const ok = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png', duration_us: 86_400_000_000 }] });
    expect(ok.statusCode).toBe(200);
  });
});
