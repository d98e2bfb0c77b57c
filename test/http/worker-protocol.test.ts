import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { REMOTE_MODEL, claimNow, pathOf, png, remoteApp, remoteJob, runRemotely, workerToken, wpost, wput } from '../helpers/remote-worker.js';
import type { Claimed } from '../helpers/remote-worker.js';
import { waitFor } from '../helpers/scripted-engine.js';

/**
 * The worker protocol (docs/workers.md) end to end over HTTP (inject), on every backend: a remote
 * worker claims, reports, uploads and completes jobs of a model bound to `remote:gpu-a`, through
 * the same moves, leases and billing as in-process runs.
 */
describe.each(backends)('worker protocol on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  const charges = async (jobId: string) => (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === jobId && e.kind === 'charge');

  it('runs a job: claim, progress, upload, complete; the output URL serves the bytes and the job is charged once', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token, { worker_id: 'box-1' });
    expect(job).toMatchObject({ id, model: REMOTE_MODEL, attempt: 1, inputs: {}, styles: {}, upload_url: `http://mediagen.test/worker/v1/jobs/${id}/outputs/` });
    expect(job!.request).toMatchObject({ prompt: 'a lighthouse at dusk', resolution: expect.any(String) });
    expect(Date.parse(job!.deadline) - Date.parse('2026-11-22T12:00:00Z')).toBe(180_000);
    expect((await get(t, `/jobs/${id}`)).json()).toMatchObject({ status: 'scheduled' });

    const progressed = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'sampling', fraction: 0.25 });
    expect(progressed.statusCode).toBe(200);
    expect(progressed.json()).toMatchObject({ status: 'sampling' });
    expect((await t.store.queue.findJob(id))!.progress).toBe(0.25);
    // The same status again is a heartbeat; an earlier one is refused.
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'sampling' })).statusCode).toBe(200);
    const back = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'processing' });
    expect(errorOf(back, 409)).toMatch(/cannot go back/);
    expect(back.json()).not.toHaveProperty('reason');

    const bytes = await png(16, 16);
    const up = await wput(t, token, id, 'output.png', job!.lease_id, bytes);
    expect(up.statusCode).toBe(201);
    expect(up.json()).toEqual({ name: 'output.png', size: bytes.length, content_type: 'image/png' });
    const done = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({ status: 'completed' });

    const shown = (await get(t, `/jobs/${id}`)).json() as { status: string; result: { urls: string[] } };
    expect(shown.status).toBe('completed');
    expect(shown.result.urls).toHaveLength(1);
    const served = await t.app.inject({ method: 'GET', url: pathOf(shown.result.urls[0]!) });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.rawPayload.equals(bytes)).toBe(true);
    expect(await charges(id)).toHaveLength(1);
    // Completing again changes nothing and charges nothing more.
    const again = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] });
    expect(again.json()).toMatchObject({ reason: 'completed' });
    expect(await charges(id)).toHaveLength(1);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('answers a waiting claim as soon as a job is created', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const waiting = wpost(t, token, '/claim', { wait_ms: 20_000 });
    // The claim waits on the (manual) clock: only the job's creation can end it.
    await new Promise((r) => setTimeout(r, 50));
    const id = await remoteJob(t);
    const res = await waiting;
    expect(res.statusCode).toBe(200);
    expect((res.json() as { jobs: Claimed[] }).jobs.map((j) => j.id)).toEqual([id]);
  });

  it('answers an empty list once wait_ms has passed', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const sleeping = t.clock.sleepers;
    let answered = false;
    const waiting = wpost(t, token, '/claim', { wait_ms: 5000 }).finally(() => (answered = true));
    // The clock moves only once the claim sleeps on it: under load its first look can take longer than any fixed pause.
    await waitFor(async () => t.clock.sleepers > sleeping, 'the claim to wait');
    let advancedMs = 0;
    for (let i = 0; i < 200 && !answered; i++) {
      t.clock.advance(250);
      advancedMs += 250;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await waiting).json()).toEqual({ jobs: [] });
    expect(advancedMs).toBeGreaterThanOrEqual(5000);
  });

  it('gives each of N jobs to exactly one of two racing claimers', async () => {
    t = await remoteApp({ backend, limits: { maxConcurrentJobs: 20, maxBackloggedJobs: 100 } });
    const [a, b] = [await workerToken(t), await workerToken(t)];
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await remoteJob(t, { prompt: `job ${i}` }));
    const got: Claimed[] = [];
    await Promise.all(
      [a, b].map(async (token) => {
        for (;;) {
          const jobs = await claimNow(t, token, { max: 2 });
          if (jobs.length === 0) return;
          got.push(...jobs);
        }
      }),
    );
    expect(got.map((j) => j.id).sort()).toEqual([...ids].sort());
    expect(new Set(got.map((j) => j.lease_id)).size).toBe(12);
  });

  it('refuses a late complete after the lease expired and the job was reclaimed; the new holder completes it, billed once', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [first] = await claimNow(t, token);
    const bytes = await png();
    expect((await wput(t, token, id, 'output.png', first!.lease_id, bytes)).statusCode).toBe(201);
    t.clock.advance(31_000);
    // Reaped here, or by the app's own remote maintenance woken by the clock: either way requeued once.
    await t.services.runs.reap();
    expect((await t.store.queue.findJob(id))!.status).toBe('queued');
    const [second] = await claimNow(t, token);
    expect(second).toMatchObject({ id, attempt: 2 });
    // The second attempt starts clean: the first one's upload is gone.
    const stale = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: second!.lease_id, outputs: [{ name: 'output.png' }] });
    expect(errorOf(stale, 400)).toMatch(/was not uploaded/);
    for (const call of [
      () => wpost(t, token, `/jobs/${id}/complete`, { lease_id: first!.lease_id, outputs: [{ name: 'output.png' }] }),
      () => wpost(t, token, `/jobs/${id}/progress`, { lease_id: first!.lease_id }),
      () => wput(t, token, id, 'output.png', first!.lease_id, bytes),
      () => wpost(t, token, `/jobs/${id}/fail`, { lease_id: first!.lease_id, code: 'engine_failed', message: 'late' }),
    ]) {
      const res = await call();
      expect(errorOf(res, 409)).toMatch(/no longer holds/);
      expect(res.json()).toMatchObject({ reason: 'lease_lost' });
    }
    expect((await t.store.queue.findJob(id))!.status).toBe('scheduled');
    expect((await wput(t, token, id, 'output.png', second!.lease_id, bytes)).statusCode).toBe(201);
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: second!.lease_id, outputs: [{ name: 'output.png' }] })).statusCode).toBe(200);
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: first!.lease_id, outputs: [{ name: 'output.png' }] })).statusCode).toBe(409);
    expect(await charges(id)).toHaveLength(1);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('tells the worker of a deleted or cancelled job to stop', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const gone = await remoteJob(t);
    const cancelled = await remoteJob(t);
    const jobs = await claimNow(t, token, { max: 2 });
    const lease = (id: string) => jobs.find((j) => j.id === id)!.lease_id;
    expect((await del(t, `/jobs/${gone}`)).statusCode).toBe(200);
    const res = await wpost(t, token, `/jobs/${gone}/progress`, { lease_id: lease(gone) });
    expect(errorOf(res, 409)).toMatch(/no longer exists/);
    expect(res.json()).toMatchObject({ reason: 'deleted' });
    expect((await wput(t, token, gone, 'output.png', lease(gone), await png())).json()).toMatchObject({ reason: 'deleted' });
    // A cancel that keeps the row (POST /jobs/{id}/cancel does): the move DELETE makes.
    await t.store.queue.move('cancel', { id: cancelled, now: Date.parse('2026-11-22T12:00:01Z') * 1000 });
    const stop = await wpost(t, token, `/jobs/${cancelled}/complete`, { lease_id: lease(cancelled), outputs: [{ name: 'output.png' }] });
    expect(stop.json()).toMatchObject({ reason: 'cancelled' });
  });

  it('fails a job, or with retryable hands it back until its attempts are used up', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const plain = await remoteJob(t);
    let [job] = await claimNow(t, token);
    const failed = await wpost(t, token, `/jobs/${plain}/fail`, { lease_id: job!.lease_id, code: 'input_invalid', message: 'image_url is not an image' });
    expect(failed.json()).toEqual({ status: 'failed' });
    expect((await get(t, `/jobs/${plain}`)).json()).toMatchObject({ status: 'failed', error: { code: 'input_invalid', message: 'image_url is not an image' } });

    const retried = await remoteJob(t);
    for (const attempt of [1, 2, 3]) {
      [job] = await claimNow(t, token);
      expect(job).toMatchObject({ id: retried, attempt });
      const res = await wpost(t, token, `/jobs/${retried}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'out of GPU memory', retryable: true });
      expect(res.json()).toEqual({ status: attempt < 3 ? 'queued' : 'failed' });
    }
    expect((await get(t, `/jobs/${retried}`)).json()).toMatchObject({ status: 'failed', error: { code: 'engine_failed', message: 'out of GPU memory' } });
    const bad = await wpost(t, token, `/jobs/${plain}/fail`, { lease_id: 'x', code: 'worker_lost', message: 'no' });
    expect(errorOf(bad, 400)).toMatch(/code/);
    expect((await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.kind === 'charge')).toEqual([]);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('fails a job past its deadline with timeout and tells its worker so', async () => {
    t = await remoteApp({ backend, runPolicy: { leaseMs: 600_000 } });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    t.clock.advance(180_000);
    const res = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id });
    expect(errorOf(res, 409)).toMatch(/deadline/);
    expect(res.json()).toMatchObject({ reason: 'timeout' });
    expect((await get(t, `/jobs/${id}`)).json()).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id })).json()).toMatchObject({ reason: 'timeout' });
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('refuses a token whose models do not name the job: on claim patterns and on job routes', async () => {
    t = await remoteApp({ backend }, ['video/vendor-d/model-d-fast']);
    const any = await workerToken(t);
    const narrow = await workerToken(t, ['video/*']);
    const id = await remoteJob(t);
    expect(errorOf(await wpost(t, narrow, '/claim', { wait_ms: 0, models: ['image/*'] }), 403)).toMatch(/none of the models the claim names \(image\/vendor-a\/model-a-2\/medium\)/);
    // Patterns narrow the token's: what it does not name is left out; without patterns it finds nothing it may take.
    expect(await claimNow(t, narrow, { models: ['image/*', 'video/*'] })).toEqual([]);
    expect(await claimNow(t, narrow)).toEqual([]);
    const [job] = await claimNow(t, any);
    for (const res of [
      await wpost(t, narrow, `/jobs/${id}/progress`, { lease_id: job!.lease_id }),
      await wput(t, narrow, id, 'output.png', job!.lease_id, await png()),
      await wpost(t, narrow, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] }),
      await wpost(t, narrow, `/jobs/${id}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'x' }),
    ]) {
      expect(errorOf(res, 403)).toMatch(/may not work on/);
    }
    // A worker token is unknown to the API, an API token to the worker protocol.
    expect((await get(t, `/jobs/${id}`, any)).statusCode).toBe(401);
    expect((await wpost(t, t.token, '/claim', { wait_ms: 0 })).statusCode).toBe(401);
  });

  it('leaves jobs of models not bound remote to in-process workers: a claim never takes them', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const res = await generate(t, 'image/vendor-a/model-a-2/large', { prompt: 'local', aspect_ratio: '1:1', resolution: '1K' });
    const local = (res.json() as Json).job_id as string;
    expect(await claimNow(t, token)).toEqual([]);
    const [job] = await claimNow(t, await workerToken(t), {});
    expect(job).toBeUndefined();
    expect(errorOf(await wpost(t, token, `/jobs/${local}/progress`, { lease_id: 'x' }), 403)).toMatch(/not run by remote workers/);
    void runRemotely;
  });
});
