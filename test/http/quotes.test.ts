import { afterEach, describe, expect, it } from 'vitest';
import { createJob, createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const UPSCALE = 'enhance/vendor-j/video-upscale';
const F = 'video/vendor-f/model-f';
const TRAIN = 'loraTraining';

/** A request body per model, each priced by a different rule: per request by its fields, metered per second, per step, per second of video. */
const BODIES: readonly [string, Json][] = [
  [A2, { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' }],
  [A2, { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K', moodboards: [{ id: '5d0c2b6e-8a8f-4f3e-9b1a-6c2d7e8f9a01' }] }],
  [UPSCALE, { video_url: 'https://assets.example/input.mp4', upscale_factor: 2, target_fps: 60 }],
  [F, { prompt: 'waves at dusk' }],
  [TRAIN, { name: 'Red', urls: ['https://assets.example/a.png', 'https://assets.example/b.png'], trigger_word: 'reddish', max_train_steps: 500 }],
];

interface Quote {
  model: string;
  price_micro_usd: number;
  price_usd: string;
  metered: boolean;
  description: string;
}

describe.each(backends)('POST /models/{id}/quote: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const quote = (model: string, body: unknown, opts: { token?: string | null; slashes?: boolean } = {}) =>
    checkedInject(t.app, {
      method: 'POST',
      url: `/models/${opts.slashes ? model : encodeURIComponent(model)}/quote`,
      headers: { ...(opts.token === null ? {} : { authorization: `Bearer ${opts.token ?? t.token}` }), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const quoted = async (model: string, body: unknown) => {
    const res = await quote(model, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Quote;
  };
  const balance = () => t.store.billing.getBalance(t.workspaceId);

  it.each(BODIES)('quotes %s exactly what its admission then holds', async (model, body) => {
    t = await createTestApp({ backend });
    const q = await quoted(model, body);
    const catalog = (await get(t, `/models/${encodeURIComponent(model)}`)).json() as { price: { description: string } };
    expect(q).toEqual({
      model,
      price_micro_usd: expect.any(Number),
      price_usd: (q.price_micro_usd / 1e6).toFixed(6),
      metered: model === UPSCALE,
      description: catalog.price.description,
    });
    expect(q.price_micro_usd).toBeGreaterThan(0);
    // Nothing held or created by the quote.
    expect(await balance()).toEqual({ balanceMicros: 1_000_000_000, heldMicros: 0 });
    expect((await get(t, '/jobs')).json()).toEqual({ items: [], next_cursor: null });

    const res = await createJob(t, model, body);
    expect(res.statusCode, res.body).toBe(200);
    const jobId = (res.json() as { job_id: string }).job_id;
    const [hold] = (await t.store.billing.entriesOfJob(jobId)).filter((e) => e.kind === 'hold');
    expect(hold!.amountMicros).toBe(q.price_micro_usd);
    expect((await balance()).heldMicros).toBe(q.price_micro_usd);
  });

  it('takes the id with its slashes as they are, as GET /models/{id} does', async () => {
    t = await createTestApp({ backend });
    const [, body] = BODIES[0]!;
    expect(await quoted(A2, body)).toEqual((await quote(A2, body, { slashes: true })).json());
  });

  it.each([
    [{ prompt: 'x', aspect_ratio: '5:7', resolution: '1K' }],
    [{ prompt: 'x', aspect_ratio: '1:1' }],
    [{ prompt: 'x', aspect_ratio: '1:1', resolution: '1K', colour: 'red' }],
    [{ prompt: 7, aspect_ratio: '1:1', resolution: '1K' }],
    [[]],
  ])('refuses the body %j with the 400 its generation endpoint answers', async (body) => {
    t = await createTestApp({ backend });
    const message = errorOf(await quote(A2, body), 400);
    expect(message).toBe(errorOf(await generate(t, A2, body), 400));
  });

  it("names the field, and applies the model's cross-field rules and retired aliases as its creation does", async () => {
    t = await createTestApp({ backend });
    expect(errorOf(await quote(A2, { prompt: 'x', aspect_ratio: '5:7', resolution: '1K' }), 400)).toContain("'aspect_ratio'");
    const both = { video_url: 'https://assets.example/input.mp4', upscale_factor: 2, resolution: '1080p' };
    expect(errorOf(await quote(UPSCALE, both), 400)).toBe("'upscale_factor' and 'resolution' cannot be given together; give one of them");
    const aliased = { prompt: 'x', aspectRatio: '1:1', resolution: '1K' };
    expect(errorOf(await quote(A2, aliased), 400)).toBe(errorOf(await generate(t, A2, aliased), 400));
  });

  it('answers a retired model with the 410 body of its generation endpoint, and an unknown one 404', async () => {
    t = await createTestApp({ backend });
    const retired = 'image/vendor-g/model-g-3';
    const gone = await quote(retired, { prompt: 'x' });
    expect(gone.statusCode).toBe(410);
    expect(gone.json()).toEqual((await generate(t, retired, { prompt: 'x' })).json());
    expect(gone.json()).toMatchObject({ error: 'model_unavailable', reason: 'deprecated' });
    // Past its sunset, a deprecated model is refused alike, whatever the body.
    await t.close();
    t = await createTestApp({ backend, deprecations: [{ model: F, sunset_date: '2026-01-01' }] });
    expect((await quote(F, 'not an object')).statusCode).toBe(410);
    expect(errorOf(await quote('image/vendor-x/nothing', {}), 404)).toBe("model 'image/vendor-x/nothing' not found");
    expect(errorOf(await t.app.inject({ method: 'POST', url: '/models/image/vendor-a/model-a-2/medium/price', headers: { authorization: `Bearer ${t.token}` } }), 404)).toContain(
      'no route POST /models/image/vendor-a/model-a-2/medium/price',
    );
  });

  it('requires a token, and takes JSON only', async () => {
    t = await createTestApp({ backend });
    const [, body] = BODIES[0]!;
    errorOf(await quote(A2, body, { token: null }), 401);
    const text = await t.app.inject({
      method: 'POST',
      url: `/models/${encodeURIComponent(A2)}/quote`,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'text/plain' },
      payload: 'prompt',
    });
    errorOf(text, 415);
  });
});
