import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';

/**
 * Engine limits and spillover (docs/routing.md): a real app, two workers sharing a real store, a
 * fake fal (test/providers/fakes/fake-fal.ts) that holds every request until released. A real
 * remote worker of the pool, and spill_after_ms on the test's clock: routing-remote.test.ts.
 */

const MODEL = 'image/acme/limited-v1';
const custom = (engine: string) => ({
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.03' },
  engine,
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}', num_images: 1 } },
});
const KEY = 'fal-key-id:0123456789abcdef0123';

describe.each(backends)('engine limits and spillover: $name', { timeout: 120_000 }, (backend) => {
  let fal: FakeFal;
  let t: TestApp | undefined;
  beforeAll(async () => {
    fal = await startFakeFal({ hold: true });
  });
  afterAll(async () => {
    await fal.close();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    clearFalJwksCache();
  });
  const providers = { providers: { up: { type: 'fal', base_url: '', api_key_env: 'FAL_KEY', storage_url: '', poll_interval_ms: 20 } }, env: { FAL_KEY: KEY } };
  const falAt = () => ({ ...providers, providers: { up: { ...providers.providers.up, base_url: fal.url, storage_url: fal.storageUrl } } });
  const create = async (app: TestApp) => {
    const res = await generate(app, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };

  it('max_in_flight holds under 50 concurrent creates, across two workers sharing the store', async () => {
    t = await createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      limits: { maxConcurrentJobs: 100, maxBackloggedJobs: 100 },
      models: [custom('provider:up')],
      routing: { engine_limits: { 'provider:up': { max_in_flight: 4 } } },
      providers: falAt(),
      worker: { pollMs: 20, concurrency: 8, log: silentLog, allowPrivateUrls: true },
    });
    await t.startWorker({ pollMs: 20, concurrency: 8 });
    const before = fal.submissions();
    const ids = await Promise.all(Array.from({ length: 50 }, () => create(t!)));
    await waitFor(async () => fal.submissions() - before === 4, 'four jobs to be submitted');
    let most = 0;
    const seen = new Set<string>();
    while (seen.size < 50) {
      const held = [...fal.requests.values()].filter((r) => !seen.has(r.id));
      const inUse = (await t.store.routes.slotsInUse()).get('provider:up') ?? 0;
      most = Math.max(most, inUse);
      expect(inUse).toBeLessThanOrEqual(4);
      for (const r of held) {
        seen.add(r.id);
        fal.release(r.id);
      }
      if (seen.size < 50) await waitFor(async () => fal.requests.size > seen.size || undefined, 'the next submissions', 20_000);
    }
    for (const id of ids) expect((await jobEnd(t, id, 30_000)).status).toBe('completed');
    expect(fal.submissions() - before).toBe(50);
    expect(most).toBeGreaterThan(0);
  });

  it("a worker claims no job of a model whose engine is full: another model's job takes the free slot at once", async () => {
    const OTHER = 'image/vendor-b/model-b-1';
    t = await createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      limits: { maxConcurrentJobs: 100, maxBackloggedJobs: 100 },
      models: [custom('provider:up')],
      routing: { engine_limits: { 'provider:up': { max_in_flight: 1 } } },
      providers: falAt(),
      worker: { pollMs: 20, concurrency: 2, log: silentLog, allowPrivateUrls: true },
    });
    const before = fal.submissions();
    const first = await create(t);
    await waitFor(async () => fal.submissions() - before === 1 || undefined, 'the first job to be submitted');
    const waiting = await Promise.all([create(t), create(t), create(t)]);
    // The worker's second slot is free: the other model's job runs in it while provider:up is full.
    const res = await generate(t, OTHER, { prompt: 'a lighthouse' });
    expect(res.statusCode, res.body).toBe(200);
    expect((await jobEnd(t, res.json<{ job_id: string }>().job_id, 20_000)).status).toBe('completed');
    for (const id of waiting) expect((await t.store.queue.findJob(id))?.status).toBe('queued');
    expect(fal.submissions() - before).toBe(1);
    // Each place freed takes a next job, one at a time (the three were created at once: in no set order).
    const pending = [first, ...waiting];
    while (pending.length > 0) {
      const id = await waitFor(async () => {
        for (const j of pending) if (await t!.store.upstreams.find(j)) return j;
        return undefined;
      }, 'the next job to be submitted', 20_000);
      pending.splice(pending.indexOf(id), 1);
      expect(fal.submissions() - before).toBe(4 - pending.length);
      for (const j of pending) expect((await t.store.queue.findJob(j))?.status).toBe('queued');
      fal.release((await t.store.upstreams.find(id))!.id);
      expect((await jobEnd(t, id, 20_000)).status).toBe('completed');
    }
    expect(fal.submissions() - before).toBe(4);
  });

  it('a job waiting on a remote pool with no worker spills to the next engine after spill_after_ms, not before', async () => {
    const spillMs = 1500;
    t = await createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [custom('remote:gpus')],
      routing: { model_engines: { [MODEL]: { engines: ['remote:gpus', 'provider:up'], spill_after_ms: spillMs } } },
      providers: falAt(),
      worker: { pollMs: 20, log: silentLog, allowPrivateUrls: true },
    });
    const id = await create(t);
    await waitFor(async () => fal.submissions() > 0 && [...fal.requests.values()].some((r) => JSON.stringify(r).includes('a fox')) && (await t!.store.upstreams.find(id)), 'the job to be spilled to fal', 20_000);
    const upstream = (await t.store.upstreams.find(id))!;
    fal.release(upstream.id);
    const job = await jobEnd(t, id, 20_000);
    expect(job.status).toBe('completed');
    const rec = (await t.store.queue.findJob(id))!;
    // Claimed only once it had waited spill_after_ms in the queue.
    expect(rec.startedAt! - rec.createdAt).toBeGreaterThanOrEqual(spillMs * 1000);
    expect(await t.services.routes.of(id)).toMatchObject({ engine: 'provider:up', tried: [{ engine: 'remote:gpus', outcome: 'spilled' }, { engine: 'provider:up', outcome: 'ran' }] });
  });
});
