import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { claimNow, png, remoteApp, remoteJob, workerToken } from '../helpers/remote-worker.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import type { Engine } from '../../src/engines/engine.js';
import { isTerminal } from '../../src/domain/states.js';
import { systemClock } from '../../src/lib/clock.js';
import { WorkerClient } from '../../src/worker/remote/protocol-client.js';
import { RemoteWorker } from '../../src/worker/remote/remote-worker.js';

/**
 * A chain whose first engine is a pool of remote workers (docs/routing.md, "Spillover"): a real
 * app on a real store, listening on loopback, with its in-process worker; a real `RemoteWorker`
 * (src/worker/remote/) claiming over the worker protocol; a fal fake (test/providers/fakes/) as
 * the engine spilled to. The app's clock is the test's: "not before spill_after_ms" is a job still
 * queued after a claim pass of the in-process worker at spill_after_ms less 1 ms, never a race.
 */

const MODEL = 'image/acme/pooled-v1';
const LOCAL = 'image/vendor-a/model-a-2/medium';
const SPILL_MS = 60_000;
const CUSTOM = {
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.03' },
  // The model's own chain (docs/config.md, "Custom models").
  engine: { engines: ['remote:gpus', 'provider:up'], spill_after_ms: SPILL_MS },
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}', num_images: 1 } },
};
const KEY = 'fal-key-id:0123456789abcdef0123';

interface Route {
  engine: string | null;
  tried: { engine: string; outcome: string }[];
}

/** The remote worker's engine: one real PNG per job. */
const pngEngine = (ran: string[]): Engine => ({
  name: 'gpu-box',
  run: async (job, ctx) => {
    ran.push(job.id);
    await writeFile(join(ctx.outDir, 'output.png'), await png());
    return [{ name: 'output.png', contentType: 'image/png' }];
  },
});

describe.each(backends)('a remote pool first in its chain: $name', { timeout: 60_000 }, (backend) => {
  let fal: FakeFal;
  let t: TestApp | undefined;
  let remote: RemoteWorker | undefined;
  beforeAll(async () => {
    fal = await startFakeFal();
  });
  afterAll(async () => {
    await fal.close();
  });
  afterEach(async () => {
    await remote?.stop(0);
    remote = undefined;
    await t?.close();
    t = undefined;
    clearFalJwksCache();
  });

  async function pooledApp(): Promise<TestApp> {
    return createTestApp({
      backend,
      // The remote worker checks the claim's deadline on its own (real) clock: the app's starts now.
      now: new Date().toISOString(),
      allowPrivateUrls: true,
      engineLatencyMs: 0,
      models: [CUSTOM],
      providers: { providers: { up: { type: 'fal', base_url: fal.url, api_key_env: 'FAL_KEY', storage_url: fal.storageUrl, poll_interval_ms: 20 } }, env: { FAL_KEY: KEY } },
      worker: { concurrency: 2, pollMs: 20, log: silentLog, allowPrivateUrls: true },
    });
  }
  const create = async (app: TestApp, model = MODEL) => {
    const res = await generate(app, model, model === MODEL ? { prompt: 'a fox' } : { prompt: 'a lighthouse', aspect_ratio: '1:1', resolution: '1K' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };
  const statusOf = async (app: TestApp, id: string) => (await app.store.queue.findJob(id))?.status;
  const charges = async (app: TestApp, id: string) => (await app.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge').length;
  /**
   * A local job through the in-process worker, as a barrier: the claim pass that took it also ran
   * the spill claim (two slots, one taken), at the clock as it is now.
   */
  const passAtNow = async (app: TestApp) => {
    const id = await create(app, LOCAL);
    expect((await jobEnd(app, id)).status).toBe('completed');
  };

  it('a job waiting on the pool with no worker is not spilled before spill_after_ms, and goes to the pool once a worker is there; its route names the pool', async () => {
    t = await pooledApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const before = fal.submissions();
    const id = await create(t);
    t.clock.advance(SPILL_MS - 1);
    await passAtNow(t);
    expect(await statusOf(t, id)).toBe('queued');
    expect(fal.submissions()).toBe(before);

    // A worker of the pool appears: the job is its, at once (the clock stays short of the spill).
    const ran: string[] = [];
    const client = new WorkerClient({ server: new URL(base), token: await workerToken(t, [MODEL]), clock: systemClock, retry: { baseMs: 5, maxMs: 20 } });
    remote = new RemoteWorker({ client, engine: pngEngine(ran), clock: systemClock, log: silentLog, inputs: { maxBytes: 1024, timeoutMs: 5000 }, concurrency: 1, pool: 'gpus', waitMs: 200, minClaimGapMs: 10, workerId: 'gpu-box-1' });
    remote.start();
    const job = await jobEnd(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(ran).toEqual([id]);
    expect(fal.submissions()).toBe(before);
    expect(await charges(t, id)).toBe(1);

    // The claim recorded its step: the job's details and usage by engine name the pool.
    const routing = { engine: 'remote:gpus', tried: [{ engine: 'remote:gpus', outcome: 'ran' }] };
    expect(await t.services.routes.of(id)).toMatchObject(routing);
    expect((await get(t, `/jobs/${id}/details`)).json<{ routing: Route }>().routing).toMatchObject(routing);
    const usage = (await get(t, '/usage/summary?group_by=model,engine')).json<{ groups: { model: string; engine: string; jobs: number; cost_micros: number }[] }>();
    expect(usage.groups.filter((g) => g.model === MODEL).map((g) => [g.engine, g.jobs, g.cost_micros])).toEqual([['remote:gpus', 1, 30_000]]);
  });

  it('a job waiting on the pool with no worker spills to the next engine at spill_after_ms, not 1 ms before', async () => {
    t = await pooledApp();
    const before = fal.submissions();
    const id = await create(t);
    t.clock.advance(SPILL_MS - 1);
    await passAtNow(t);
    expect(await statusOf(t, id)).toBe('queued');
    expect(fal.submissions()).toBe(before);

    t.clock.advance(1);
    await passAtNow(t);
    await waitFor(async () => fal.submissions() > before, 'the job to be submitted to fal');
    // The provider polls on the app's clock: move it until the job ends.
    const status = await waitFor(async () => {
      const s = await statusOf(t!, id);
      if (s && isTerminal(s)) return s;
      t!.clock.advance(50);
      return undefined;
    }, 'the spilled job to end', 20_000);
    expect(status).toBe('completed');
    expect(fal.submissions() - before).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect(await t.services.routes.of(id)).toMatchObject({ engine: 'provider:up', tried: [{ engine: 'remote:gpus', outcome: 'spilled' }, { engine: 'provider:up', outcome: 'ran' }] });
  });

  it('a claim of a model bound to a pool alone records no route, as a run on its one engine records none', async () => {
    t = await remoteApp({ backend });
    const id = await remoteJob(t);
    expect(await claimNow(t, await workerToken(t))).toMatchObject([{ id }]);
    expect(await t.services.routes.of(id)).toBeUndefined();
    expect((await get(t, `/jobs/${id}/details`)).json<{ routing?: Route }>().routing).toBeUndefined();
  });
});
