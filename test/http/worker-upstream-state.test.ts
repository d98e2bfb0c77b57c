import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import type { TestApp } from '../helpers/app.js';
import { claimNow, remoteApp, remoteJob, workerToken, wpost } from '../helpers/remote-worker.js';

/**
 * Engine state over the worker protocol (docs/workers.md, "Engine state"): what a run stores with
 * its job (a ComfyUI prompt id, a provider's job id) comes back with the job's next claim, so a
 * restarted run resumes that work instead of starting it twice.
 */
describe.each(backends)('engine state kept with a remote job on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it("hands the next claim what the last run stored, and a first claim nothing", async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [first] = await claimNow(t, token);
    expect(first!.id).toBe(id);
    expect(first).not.toHaveProperty('upstream');
    const upstream = { engine: 'comfyui:gpu', id: '5d1c2b4e-9f3a-4c8e-8a61-0e2f7d9b3c10', state: { client_id: 'c-1', queued: true } };
    const saved = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: first!.lease_id, status: 'processing', upstream });
    expect(saved.statusCode, saved.body).toBe(200);
    // The worker gives the job back (it is restarting): the next claim carries the state.
    const back = await wpost(t, token, `/jobs/${id}/fail`, { lease_id: first!.lease_id, code: 'engine_failed', message: 'restarting', retryable: true });
    expect(back.statusCode, back.body).toBe(200);
    const [second] = await claimNow(t, token);
    expect(second).toMatchObject({ id, attempt: 2, upstream });
  });

  it('refuses a state larger than 16 KiB and one from a worker that no longer holds the job', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    const big = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, upstream: { engine: 'comfyui:gpu', id: 'p', state: { blob: 'x'.repeat(17 * 1024) } } });
    expect(big.statusCode).toBe(400);
    expect(big.json<{ error: string }>().error).toContain('upstream.state is larger than 16384 bytes');
    const stale = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: '00000000-0000-4000-8000-000000000000', upstream: { engine: 'comfyui:gpu', id: 'p', state: {} } });
    expect(stale.statusCode).toBe(409);
    expect(await t.store.upstreams.find(id)).toBeUndefined();
  });
});
