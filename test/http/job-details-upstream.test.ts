import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeKrea } from '../providers/fakes/fake-krea.js';
import type { FakeKrea } from '../providers/fakes/fake-krea.js';

/**
 * GET /jobs/{id}/details' `upstream` (docs/providers.md, "What is stored"): the engine that held the
 * job's work elsewhere, named as models are bound to it, and the upstream's status as that engine's
 * kind reads its own state; once the job ended, never a status the upstream was still working in.
 */

const MODEL = 'image/vendor-b/model-b-1';

describe('job details: the upstream of a provider-bound job', () => {
  let krea: FakeKrea;
  beforeAll(async () => {
    krea = await startFakeKrea();
  });
  afterAll(async () => {
    await krea.close();
  });
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const start = (timeoutMs?: number) =>
    createTestApp({
      realClock: true,
      modelEngines: { [MODEL]: 'provider:up' },
      providers: { providers: { up: { type: 'krea', base_url: krea.url, api_key_env: 'UP_TOKEN', poll_interval_ms: 20 } }, upstream: {}, env: { UP_TOKEN: krea.token } },
      worker: { pollMs: 50, log: silentLog },
      ...(timeoutMs ? { runPolicy: { timeoutMs: () => timeoutMs } } : {}),
    });
  const create = async (app: TestApp) => {
    const res = await generate(app, MODEL, { prompt: 'a red fox', width: 512, height: 512 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };
  const upstreamOf = async (app: TestApp, id: string) => (await get(app, `/jobs/${id}/details`)).json<{ upstream: Json }>().upstream;

  it("names the engine, and shows the provider's status while the job runs and `cancelled` once the job was cancelled", async () => {
    krea.statuses = ['processing'];
    t = await start();
    const id = await create(t);
    await waitFor(async () => (await get(t!, `/jobs/${id}`)).json<{ status: string }>().status === 'sampling', 'the job to be sampling');
    const upstreamId = (await t.store.upstreams.find(id))!.id;
    expect(await upstreamOf(t, id)).toEqual({ engine: 'provider:up', provider: 'up', id: upstreamId, status: 'processing', usage: null });
    const res = await checkedInject(t.app, { method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => krea.cancels.includes(upstreamId), 'the cancel to reach the provider');
    expect(await upstreamOf(t, id)).toEqual({ engine: 'provider:up', provider: 'up', id: upstreamId, status: 'cancelled', usage: null });
  });

  it('shows `cancelled` for a job that timed out while the provider was still working on it', async () => {
    krea.statuses = ['processing'];
    t = await start(1500);
    const id = await create(t);
    const job = await jobEnd(t, id, 20_000);
    expect(job.error).toMatchObject({ code: 'timeout' });
    expect(await upstreamOf(t, id)).toMatchObject({ engine: 'provider:up', status: 'cancelled' });
  });

  it("keeps the provider's own final status for a job that completed", async () => {
    krea.statuses = ['processing', 'completed'];
    t = await start();
    const id = await create(t);
    expect((await jobEnd(t, id, 20_000)).status).toBe('completed');
    expect(await upstreamOf(t, id)).toMatchObject({ engine: 'provider:up', provider: 'up', status: 'completed' });
  });
});
