import { afterEach, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { withRandomSeed } from '../../src/models/random-seed.js';
import { MODELS } from '../../src/models/registry.js';
import { compileNow } from '../../src/models/validation.js';
import { createTestApp, generate, get, jobWhenEnded } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';

/**
 * A request without a seed gets a random one, stored with the job (GET /jobs/{id}/details), so
 * two identical seedless requests give different outputs and the recorded seed gives the same
 * output again, byte for byte (issue 42: a seedless request always drew the same picture).
 */

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
type Job = Json & { job_id: string; status: string; result?: { urls: string[] } };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const start = (random?: () => number) =>
  createTestApp({ realClock: true, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), pollMs: 50 }, ...(random ? { random } : {}) });

async function created(app: TestApp, model: string, body: Json, headers: Record<string, string> = {}): Promise<Job> {
  const res = await generate(app, model, body, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Job>();
}

const requestOf = async (app: TestApp, id: string) => (await get(app, `/jobs/${id}/details`)).json<{ request: Json }>().request;

async function outputOf(app: TestApp, id: string): Promise<Buffer> {
  const done = await jobWhenEnded<Job>(app, id);
  expect(done.status, JSON.stringify(done)).toBe('completed');
  const res = await app.app.inject({ method: 'GET', url: new URL(done.result!.urls[0]!).pathname });
  expect(res.statusCode).toBe(200);
  expect(res.rawPayload.subarray(1, 4).toString('latin1')).toBe('PNG');
  return res.rawPayload;
}

describe('a request without a seed', () => {
  it('gets a random seed, recorded in the job details; two such requests differ and the recorded seed reproduces the output byte for byte', async () => {
    t = await start();
    const body = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '1:1', resolution: '1K' };
    const first = await created(t, A2, body);
    const second = await created(t, A2, body);
    const [seed1, seed2] = [(await requestOf(t, first.job_id)).seed, (await requestOf(t, second.job_id)).seed];
    expect(seed1).toEqual(expect.any(Number));
    expect(Number.isInteger(seed1) && (seed1 as number) >= 0 && (seed1 as number) <= 4_294_967_295).toBe(true);
    expect(seed2).not.toBe(seed1);
    const [out1, out2] = [await outputOf(t, first.job_id), await outputOf(t, second.job_id)];
    expect(out1.equals(out2)).toBe(false);

    const again = await created(t, A2, { ...body, seed: seed1 });
    expect((await requestOf(t, again.job_id)).seed).toBe(seed1);
    expect((await outputOf(t, again.job_id)).equals(out1)).toBe(true);
  });

  it('draws from the injected random source; null asks for one too; a model without a seed field gets none', async () => {
    t = await start(() => 0.5);
    const drawn = await created(t, A2, { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' });
    expect(await requestOf(t, drawn.job_id)).toMatchObject({ seed: 2_147_483_648 });
    const fromNull = await created(t, A2, { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', seed: null });
    expect(await requestOf(t, fromNull.job_id)).toMatchObject({ seed: 2_147_483_648 });
    const given = await created(t, A2, { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', seed: 7 });
    expect(await requestOf(t, given.job_id)).toMatchObject({ seed: 7 });
    const none = await created(t, B1, { prompt: 'x' });
    expect(await requestOf(t, none.job_id)).not.toHaveProperty('seed');
  });

  it('replays the first job, seed and all, for a retry with the same Idempotency-Key', async () => {
    let n = 0;
    t = await start(() => (n++ % 2 === 0 ? 0.25 : 0.75));
    const body = { prompt: 'once', aspect_ratio: '1:1', resolution: '1K' };
    const first = await created(t, A2, body, { 'idempotency-key': 'seed-retry-1' });
    const retry = await created(t, A2, body, { 'idempotency-key': 'seed-retry-1' });
    expect(retry.job_id).toBe(first.job_id);
    expect(await requestOf(t, first.job_id)).toMatchObject({ seed: 1_073_741_824 });
  });
});

describe('the seed drawn', () => {
  it('lies within the seed field of every built-in model that has one', () => {
    const seeded = MODELS.filter((m) => m.request?.properties.seed !== undefined);
    expect(seeded.length).toBeGreaterThanOrEqual(5);
    for (const m of seeded) {
      for (const r of [0, 0.999999999999]) {
        const { seed } = withRandomSeed(m.request, { prompt: 'p' }, () => r);
        const field = compileNow({ type: 'object', properties: { seed: m.request!.properties.seed } });
        expect(field({ seed }), `${m.path}: ${String(seed)}`).toBe(true);
      }
    }
  });

  it("keeps within a custom model's bounds, exclusive or not, and draws none for a seed of listed values or a string", () => {
    const schema = (seed: object) => ({ type: 'object', properties: { seed } }) as never;
    expect(withRandomSeed(schema({ type: 'integer', minimum: 10, maximum: 12 }), {}, () => 0.999999)).toEqual({ seed: 12 });
    expect(withRandomSeed(schema({ type: 'integer', exclusiveMinimum: 10, exclusiveMaximum: 12 }), {}, () => 0)).toEqual({ seed: 11 });
    expect(withRandomSeed(schema({ type: 'integer', enum: [1, 2] }), {}, () => 0)).toEqual({});
    expect(withRandomSeed(schema({ type: 'string' }), {}, () => 0)).toEqual({});
  });
});
