import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';

/**
 * Fallback chains (docs/routing.md): a real app and worker on a real store, two fal accounts as
 * fakes written from fal's documentation (test/providers/fakes/fake-fal.ts) on loopback.
 */

const MODEL = 'image/acme/chained-v1';
const CUSTOM = {
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.03' },
  engine: 'provider:first',
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}', num_images: 1 } },
};
const KEY = 'fal-key-id:0123456789abcdef0123';

interface Route {
  engine: string | null;
  tried: { engine: string; outcome: string }[];
}

describe.each(backends)('fallback chains: $name', { timeout: 60_000 }, (backend) => {
  let first: FakeFal;
  let second: FakeFal;
  let t: TestApp | undefined;
  beforeAll(async () => {
    first = await startFakeFal();
    second = await startFakeFal();
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    clearFalJwksCache();
  });

  const fal = (url: string, storage: string) => ({ type: 'fal', base_url: url, api_key_env: 'FAL_KEY', storage_url: storage, poll_interval_ms: 20 });
  const CHAIN = ['provider:first', 'provider:second'];
  /** `own`: the chain is the custom model's own `engine` rather than a model_engines entry. */
  async function chainApp(firstUrl: string, circuit: Json = {}, own = false) {
    return createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [own ? { ...CUSTOM, engine: CHAIN } : CUSTOM],
      routing: { ...(own ? {} : { model_engines: { [MODEL]: CHAIN } }), circuit },
      providers: { providers: { first: fal(firstUrl, first.storageUrl), second: fal(second.url, second.storageUrl) }, env: { FAL_KEY: KEY } },
      worker: { pollMs: 50, log: silentLog, allowPrivateUrls: true },
      metrics: { port: 0 },
    });
  }
  const run = async (app: TestApp) => {
    const res = await generate(app, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    return { id, job: await jobEnd(app, id, 20_000) };
  };
  const charges = async (app: TestApp, id: string) => (await app.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge').length;
  const routeOf = async (app: TestApp, id: string) => (await app.services.routes.of(id)) as Route | undefined;

  it('a first engine on a closed port: the job completes on the second, charged once, submitted once', async () => {
    t = await chainApp(`http://127.0.0.1:${await freePort()}`);
    const before = second.submissions();
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(second.submissions() - before).toBe(1);
    expect(await charges(t, id)).toBe(1);
    const route = await routeOf(t, id);
    expect(route?.engine).toBe('provider:second');
    expect(route?.tried.map((s) => [s.engine, s.outcome])).toEqual([
      ['provider:first', 'refused'],
      ['provider:second', 'ran'],
    ]);
    // The owner reads the same in the job's details, checked against the route's schema.
    const details = (await get(t, `/jobs/${id}/details`)).json<{ routing: Route }>();
    expect(details.routing).toMatchObject({ engine: 'provider:second', tried: [{ engine: 'provider:first', outcome: 'refused' }, { engine: 'provider:second', outcome: 'ran' }] });
  });

  it('a first engine answering 503 on submit: the second takes the job, one submission there and none kept at the first', async () => {
    t = await chainApp(first.url);
    first.failNext(1, { status: 503, detail: 'overloaded' });
    const [a, b] = [first.submissions(), second.submissions()];
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(first.submissions() - a).toBe(0);
    expect(second.submissions() - b).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect((await routeOf(t, id))?.tried.map((s) => s.outcome)).toEqual(['refused', 'ran']);
  });

  it.each([
    ['on a closed port', false],
    ['answering 503 on submit', true],
  ])("a custom model whose own engine is the chain, its first %s: the job completes on the second, charged once, submitted once", async (_name, answers) => {
    t = await chainApp(answers ? first.url : `http://127.0.0.1:${await freePort()}`, {}, true);
    if (answers) first.failNext(1, { status: 503, detail: 'overloaded' });
    const [a, b] = [first.submissions(), second.submissions()];
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(first.submissions() - a).toBe(0);
    expect(second.submissions() - b).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect((await routeOf(t, id))?.tried.map((s) => [s.engine, s.outcome])).toEqual([
      ['provider:first', 'refused'],
      ['provider:second', 'ran'],
    ]);
    // GET /models/{id} names the model's own chain to its owner.
    expect((await get(t, `/models/${MODEL}`)).json<{ engines: { name: string }[] }>().engines.map((e) => e.name)).toEqual(CHAIN);
  });

  it('an open circuit: the first engine is skipped without a call, and the job completes on the second', async () => {
    t = await chainApp(first.url, { failures: 1, cooldown_ms: 60_000 });
    first.failNext(1, { status: 503, detail: 'overloaded' });
    await run(t); // opens the first engine's circuit
    const calls = first.calls.length;
    const b = second.submissions();
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(first.calls.length).toBe(calls);
    expect(second.submissions() - b).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect((await routeOf(t, id))?.tried.map((s) => [s.engine, s.outcome])).toEqual([
      ['provider:first', 'skipped'],
      ['provider:second', 'ran'],
    ]);
    const metrics = await (await fetch(`${t.metricsUrl!}/metrics`)).text();
    expect(metrics).toContain('mediagen_engine_up{engine="provider:first"} 0');
    expect(metrics).toContain('mediagen_engine_up{engine="provider:second"} 1');
  });

  it('a job the first engine accepted and then failed is not sent to the second, and not charged', async () => {
    t = await chainApp(first.url);
    first.failJob('nsfw content detected');
    try {
      const b = second.submissions();
      const { id, job } = await run(t);
      expect(job.status).toBe('failed');
      expect((job.error as { code: string }).code).toBe('upstream_failed');
      expect(second.submissions() - b).toBe(0);
      expect(await charges(t, id)).toBe(0);
      expect(await routeOf(t, id)).toMatchObject({ engine: 'provider:first', tried: [{ engine: 'provider:first', outcome: 'ran' }] });
    } finally {
      first.failJob('');
    }
  });
});
