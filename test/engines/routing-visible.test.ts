import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { memberToken } from '../helpers/members.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { describeModel } from '../../packages/client/src/cli/models.js';

/**
 * Visible routing (docs/routing.md, "What owners and admins see"): /readyz and GET /models/{id}
 * name each engine's circuit. A real app and worker on a real store; the second engine is a fal
 * fake written from fal's documentation (test/providers/fakes/fake-fal.ts), the first a closed port.
 */

const MODEL = 'image/acme/visible-v1';
const CUSTOM = {
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.03' },
  engine: 'provider:first',
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}', num_images: 1 } },
};
const KEY = 'fal-key-id:0123456789abcdef0123';

describe.each(backends)('visible routing: $name', { timeout: 60_000 }, (backend) => {
  let second: FakeFal;
  let t: TestApp | undefined;
  beforeAll(async () => {
    second = await startFakeFal();
  });
  afterAll(async () => {
    await second.close();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    clearFalJwksCache();
  });

  const fal = (url: string, storage: string) => ({ type: 'fal', base_url: url, api_key_env: 'FAL_KEY', storage_url: storage, poll_interval_ms: 20 });
  async function chainApp() {
    return createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [CUSTOM],
      routing: { model_engines: { [MODEL]: ['provider:first', 'provider:second'] }, circuit: { failures: 1, cooldown_ms: 600_000 } },
      providers: {
        providers: { first: fal(`http://127.0.0.1:${await freePort()}`, second.storageUrl), second: fal(second.url, second.storageUrl) },
        env: { FAL_KEY: KEY },
      },
      worker: { pollMs: 50, log: silentLog, allowPrivateUrls: true },
    });
  }
  /** One job through the chain: the first engine refuses it (a closed port), which opens its circuit. */
  async function runOne(app: TestApp): Promise<void> {
    const res = await generate(app, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    const job = await jobEnd(app, res.json<{ job_id: string }>().job_id, 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
  }

  it('/readyz names each engine with its circuit: closed before any failure, open once the first engine kept failing', async () => {
    t = await chainApp();
    const before = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(before.statusCode, before.body).toBe(200);
    const states = (body: string) => Object.fromEntries((JSON.parse(body) as { engines: { name: string; state: string }[] }).engines.map((e) => [e.name, e.state]));
    expect(states(before.body)).toMatchObject({ 'provider:first': 'closed', 'provider:second': 'closed' });
    await runOne(t);
    const after = await t.app.inject({ method: 'GET', url: '/readyz' });
    // An open circuit is a detail: the process stays ready.
    expect(after.statusCode, after.body).toBe(200);
    expect(states(after.body)).toMatchObject({ 'provider:first': 'open', 'provider:second': 'closed' });
  });

  it('GET /models/{id} names the engines of the chain in order with their state for owners and admins, not for members or without a token', async () => {
    t = await chainApp();
    await runOne(t);
    const url = `/models/${encodeURIComponent(MODEL)}`;
    const expected = [
      { name: 'provider:first', state: 'open' },
      { name: 'provider:second', state: 'closed' },
    ];
    const owner = await get(t, url);
    expect(owner.statusCode, owner.body).toBe(200);
    expect(owner.json<{ engines: unknown }>().engines).toEqual(expected);
    // `mediagen models show` prints them as they come.
    expect(describeModel(owner.json())).toContain('Engines: provider:first (state open), provider:second (state closed)');
    // The id with its slashes as they are: the same answer.
    expect((await get(t, `/models/${MODEL}`)).json<{ engines: unknown }>().engines).toEqual(expected);
    const admin = await get(t, url, await memberToken(t, 'ada@example.com', 'admin'));
    expect(admin.json<{ engines: unknown }>().engines).toEqual(expected);
    const member = await get(t, url, await memberToken(t, 'bob@example.com', 'member'));
    expect(member.statusCode, member.body).toBe(200);
    expect(member.json()).not.toHaveProperty('engines');
    const anonymous = await t.app.inject({ method: 'GET', url });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json()).not.toHaveProperty('engines');
    // The listing never shows engines, even to an owner.
    expect(JSON.stringify((await get(t, '/models')).json())).not.toContain('provider:first');
    const bad = await get(t, url, 'not-a-token');
    expect(bad.statusCode).toBe(401);
    expect(bad.json<{ error: string }>().error).toMatch(/token|Authorization/i);
  });

  it('GET /usage/summary?group_by=engine sums the charges by the engine that took each job, a job without a route by its model\'s bound engine; members get 403', async () => {
    t = await chainApp();
    await runOne(t); // taken by provider:second, its route recorded
    // Jobs without a recorded route, written straight to the ledger: two of a built-in model bound
    // to `local`, one of the chained model (as if run before routing): its chain's first engine.
    const seed = async (jobType: string, amountMicros: number) => {
      const jobId = randomUUID();
      const now = Date.now() * 1000;
      await t!.store.billing.hold({ workspaceId: t!.workspaceId, jobId, jobType, amountMicros, now: now - 1000 });
      await t!.store.billing.charge(jobId, now);
    };
    await seed('image/vendor-b/model-b-1', 1_000);
    await seed('image/vendor-b/model-b-1', 2_000);
    await seed(MODEL, 5_000);
    const res = await get(t, '/usage/summary?group_by=engine');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ total: { jobs: number; cost_micros: number }; groups: { engine: string; model?: string; jobs: number; cost_micros: number }[] }>();
    expect(body.total).toMatchObject({ jobs: 4, cost_micros: 38_000 });
    expect(body.groups.map((g) => [g.engine, g.jobs, g.cost_micros])).toEqual([
      ['local', 2, 3_000],
      ['provider:first', 1, 5_000],
      ['provider:second', 1, 30_000],
    ]);
    expect(body.groups.every((g) => g.model === undefined)).toBe(true);
    const both = (await get(t, '/usage/summary?group_by=model,engine')).json<{ groups: { engine: string; model: string; jobs: number }[] }>();
    expect(both.groups.map((g) => [g.model, g.engine, g.jobs])).toEqual([
      ['image/acme/visible-v1', 'provider:first', 1],
      ['image/acme/visible-v1', 'provider:second', 1],
      ['image/vendor-b/model-b-1', 'local', 2],
    ]);
    const admin = await get(t, '/usage/summary?group_by=engine', await memberToken(t, 'ada@example.com', 'admin'));
    expect(admin.statusCode, admin.body).toBe(200);
    const member = await get(t, '/usage/summary?group_by=engine', await memberToken(t, 'bob@example.com', 'member'));
    expect(member.statusCode, member.body).toBe(403);
    expect(member.json<{ error: string }>().error).toContain('group usage by engine');
    // Without engine, a member's summary is as before.
    expect((await get(t, '/usage/summary?group_by=model', await memberToken(t, 'cy@example.com', 'member'))).statusCode).toBe(200);
  });
});
