import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { PUBLIC_URL, createJob, createTestApp, del, errorOf, generate, get, jobWhenEnded } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { StyleTestEngine, colourDataUri, meanColour } from '../helpers/style-engine.js';
import { A2_MEDIUM, MINIMAL } from './generate-support.js';

/** Issue 15 points 1 and 4: POST /styles/train is a job like any other, and its completion makes a style. */

const TRAIN = 'loraTraining';

type JobJson = { job_id: string; type: string; status: string; result?: { urls?: string[]; style_id?: string }; error?: { code: string } };

const train = (t: TestApp, body: unknown, headers: Record<string, string> = {}, token?: string) => createJob(t, TRAIN, body, headers, token);

/** A stored file by its absolute URL, as a client fetches it (no token). */
const fetchOutput = (t: TestApp, url: string): Promise<LightMyRequestResponse> => t.app.inject({ method: 'GET', url: url.replace(PUBLIC_URL, '') });

const close = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]!) <= 2);

describe.each(backends)('style training on $name', (backend) => {
  let t: TestApp;
  let engine: StyleTestEngine;
  beforeAll(async () => {
    engine = new StyleTestEngine();
    t = await createTestApp({ backend, worker: { engine, pollMs: 50 } });
  });
  afterAll(() => t.close());

  async function trained(body: Json): Promise<JobJson> {
    const res = await train(t, body);
    expect(res.statusCode, res.body).toBe(200);
    return jobWhenEnded<JobJson>(t, res.json<JobJson>().job_id);
  }

  it('trains from real images: the job completes with result.style_id and the cover, and the style is listed', async () => {
    const red = await sharp({ create: { width: 24, height: 24, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    const asset = (await uploadAsset(t.app, t.token, { bytes: red, filename: 'red.png' })).json<{ image_url: string }>();
    const res = await train(t, { name: 'Red', urls: [asset.image_url, await colourDataUri(220, 40, 40)], trigger_word: 'reddish' });
    expect(res.statusCode, res.body).toBe(200);
    const created = res.json<Json>();
    expect(created).toMatchObject({ status: 'queued', completed_at: null, result: null });
    const job = await jobWhenEnded<JobJson>(t, created.job_id as string);
    expect(job).toMatchObject({ type: TRAIN, status: 'completed' });
    expect(Object.keys(job.result!).sort()).toEqual(['style_id', 'urls']);
    const [cover] = job.result!.urls!;
    expect(job.result!.urls).toHaveLength(1);
    const file = await fetchOutput(t, cover!);
    expect(file.statusCode).toBe(200);
    expect(close(await meanColour(file.rawPayload), [210, 35, 35])).toBe(true);

    const id = job.result!.style_id!;
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    const style = (await get(t, `/styles/${id}`)).json<Json>();
    expect(style).toEqual({
      id,
      title: 'Red',
      urls: [cover],
      public: false,
      cover_url: cover,
      prompt: 'reddish',
      models: ['flux_dev'],
      owner: { id: auth.apiUserId, name: 'default', avatar_url: null },
      like_count: 0,
      created_at: expect.stringMatching(/Z$/) as unknown,
    });
    expect((await get(t, '/styles')).json<{ items: Json[] }>().items.map((s) => s.id)).toContain(id);
    // The artifact is stored with the style and never served: the job's only file is the cover.
    expect(await t.store.styles.getArtifact(id)).toEqual({ mean: [210, 35, 35], images: 2, model: 'flux_dev' });
    expect((await fetchOutput(t, cover!.replace('cover.png', 'style.json'))).statusCode).toBe(404);
  });

  it('hands the style to a model-a-2 job through loadStyle: its output takes the trained colour', async () => {
    const job = await trained({ name: 'Green', urls: [await colourDataUri(20, 180, 60)] });
    const styleId = job.result!.style_id!;
    const res = await generate(t, A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], styles: [{ id: styleId, strength: 1 }] });
    expect(res.statusCode, res.body).toBe(200);
    const styled = await jobWhenEnded<JobJson>(t, res.json<JobJson>().job_id);
    expect(styled.status).toBe('completed');
    expect(engine.loaded.get(styled.job_id)).toEqual({ [styleId]: { mean: [20, 180, 60], images: 1, model: 'flux_dev' } });
    const out = await fetchOutput(t, styled.result!.urls![0]!);
    expect(close(await meanColour(out.rawPayload), [20, 180, 60])).toBe(true);
  });

  it('charges the training price once: max_train_steps at the base model rate', async () => {
    const cases: [Json, number][] = [
      [{ name: 'a', urls: [await colourDataUri(1, 2, 3)], max_train_steps: 500 }, 500 * 300],
      [{ name: 'b', urls: [await colourDataUri(1, 2, 3)], model: 'qwen' }, 1000 * 830],
      [{ name: 'c', urls: [await colourDataUri(1, 2, 3)], model: 'z-image', max_train_steps: 10 }, 10 * 240],
    ];
    for (const [body, price] of cases) {
      const job = await trained(body);
      expect(job.status).toBe('completed');
      const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === job.job_id);
      expect(entries.map((e) => [e.kind, e.amountMicros]).sort()).toEqual([
        ['charge', price],
        ['hold', price],
      ]);
    }
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it.each([
    ['is not JSON', { styleText: '{"mean": [1, 2' }],
    ['is not an object', { styleText: '[1, 2, 3]' }],
    ['is larger than 64 KiB', { styleText: JSON.stringify({ blob: 'x'.repeat(64 * 1024) }) }],
    ['comes twice', { styleFiles: 2 }],
  ])('a style file that %s fails the job with engine_failed: no style, the hold released', async (_what, broken) => {
    Object.assign(engine, broken);
    try {
      const job = await trained({ name: 'broken', urls: [await colourDataUri(9, 9, 9)] });
      expect(job).toMatchObject({ status: 'failed', error: { code: 'engine_failed' } });
      expect(job.result).toBeUndefined();
      const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === job.job_id);
      expect(entries.map((e) => e.kind).sort()).toEqual(['hold', 'release']);
      const titles = (await get(t, '/styles?limit=1000')).json<{ items: Json[] }>().items.map((s) => s.title);
      expect(titles).not.toContain('broken');
    } finally {
      Object.assign(engine, { styleText: undefined, styleFiles: 1 });
    }
  });

  it('keeps the style, its artifact and its cover when the training job is deleted', async () => {
    const job = await trained({ name: 'Kept', urls: [await colourDataUri(90, 90, 200)] });
    const id = job.result!.style_id!;
    expect((await del(t, `/jobs/${job.job_id}`)).statusCode).toBe(200);
    expect((await get(t, `/jobs/${job.job_id}`)).statusCode).toBe(404);
    const style = (await get(t, `/styles/${id}`)).json<{ cover_url: string }>();
    expect(style.cover_url).toBe(job.result!.urls![0]);
    const cover = await fetchOutput(t, style.cover_url);
    expect(cover.statusCode).toBe(200);
    expect(close(await meanColour(cover.rawPayload), [90, 90, 200])).toBe(true);
    expect(await t.services.styles.artifact(id)).toMatchObject({ mean: [90, 90, 200] });
    // The janitor keeps the key too.
    const key = new URL(style.cover_url).pathname.split('/')[2]!;
    expect(await t.store.jobs.outputKeysInUse([key])).toEqual(new Set([key]));
  });

  it('takes X-Webhook-URL and replays an Idempotency-Key like every creation', async () => {
    const body = { name: 'Once', urls: [await colourDataUri(5, 5, 5)] };
    const headers = { 'x-webhook-url': 'https://hooks.example.com/styles', 'idempotency-key': 'train-once' };
    const first = await train(t, body, headers);
    const again = await train(t, body, headers);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json<Json>().job_id).toBe(first.json<Json>().job_id);
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    expect((await t.store.jobs.getJob(auth.apiUserId, first.json<JobJson>().job_id))!.webhookUrl).toBe('https://hooks.example.com/styles');
    // The same key with another body is refused.
    expect((await train(t, { ...body, name: 'Twice' }, headers)).statusCode).toBe(422);
    await jobWhenEnded(t, first.json<JobJson>().job_id);
  });

  it('lists training jobs under their type, and answers no /generate route for it', async () => {
    const jobs = (await get(t, `/jobs?types=${TRAIN}&limit=1000`)).json<{ items: JobJson[] }>().items;
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.every((j) => j.type === TRAIN)).toBe(true);
    expect(errorOf(await checkedInject(t.app, { method: 'POST', url: `/generate/${TRAIN}`, headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, payload: '{}' }), 404)).toMatch(/no route/);
    const model = (await get(t, `/models/${TRAIN}`)).json<Json>();
    expect(model).toMatchObject({ id: TRAIN, endpoint: '/styles/train', kind: 'image', available: true });
  });
});

describe.each(backends)('POST /styles/train bodies on $name', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 100_000, maxBackloggedJobs: 1_000_000 } });
  });
  afterAll(() => t.close());

  const URL1 = 'https://example.com/style-1.png';
  const base = { name: 'Ink', urls: [URL1] };

  async function stored(body: Json): Promise<Json> {
    const res = await train(t, body);
    expect(res.statusCode, res.body).toBe(200);
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    const job = (await t.store.jobs.getJob(auth.apiUserId, res.json<JobJson>().job_id))!;
    await t.store.jobs.deleteJob(auth.apiUserId, job.id);
    expect(job.type).toBe(TRAIN);
    return job.request as Json;
  }

  it('stores the body with its defaults: flux_dev, 1000 steps, no type', async () => {
    expect(await stored(base)).toEqual({ ...base, model: 'flux_dev', max_train_steps: 1000 });
  });

  it.each([
    ['every field of the first variant', { model: 'wan22', type: 'Character', trigger_word: 'ink', learning_rate: 0.0004, max_train_steps: 2000, batch_size: 4 }],
    ['flux_schnell', { model: 'flux_schnell' }],
    ['wan with type Default', { model: 'wan', type: 'Default' }],
    ['qwen with type Style', { model: 'qwen', type: 'Style', max_train_steps: 1, trigger_word: 'q' }],
    ['z-image with type Object', { model: 'z-image', type: 'Object' }],
    ['50 images', { urls: Array.from({ length: 50 }, (_, i) => `https://example.com/${i}.png`) }],
  ])('accepts %s', async (_name, patch) => {
    expect(await stored({ ...base, ...patch })).toMatchObject(patch);
  });

  it.each([
    ['no name', { name: undefined }, "'name'"],
    ['an empty name', { name: '' }, "'name'"],
    ['no urls', { urls: undefined }, "'urls'"],
    ['no images', { urls: [] }, "'urls' must have at least 1 item"],
    ['51 images', { urls: Array.from({ length: 51 }, (_, i) => `https://example.com/${i}.png`) }, "'urls' must have at most 50 items"],
    ['an image that is no URL', { urls: ['not a url'] }, "'urls[0]'"],
    ['an unknown base model', { model: 'sdxl' }, "'model'"],
    ['an unknown type', { type: 'Landscape' }, "'type'"],
    ['an empty trigger word', { trigger_word: '' }, "'trigger_word'"],
    ['0 steps', { max_train_steps: 0 }, "'max_train_steps'"],
    ['2001 steps', { max_train_steps: 2001 }, "'max_train_steps'"],
    ['1.5 steps', { max_train_steps: 1.5 }, "'max_train_steps'"],
    ['batch_size 0', { batch_size: 0 }, "'batch_size'"],
    ['learning_rate 0', { learning_rate: 0 }, "'learning_rate'"],
    ['learning_rate 2', { learning_rate: 2 }, "'learning_rate'"],
    ['an unknown field', { steps: 10 }, "'steps'"],
    ['qwen with a learning_rate', { model: 'qwen', learning_rate: 0.001 }, "'learning_rate' is not taken when 'model' is qwen"],
    ['z-image with a batch_size', { model: 'z-image', batch_size: 2 }, "'batch_size' is not taken when 'model' is z-image"],
    ['qwen with type Default', { model: 'qwen', type: 'Default' }, "'type' must be one of"],
  ])('refuses %s with 400 naming the field', async (_name, patch, message) => {
    const res = await train(t, { ...base, ...patch });
    expect(errorOf(res, 400)).toContain(message);
  });

  it("refuses an asset URL this workspace does not have, naming the image", async () => {
    const res = await train(t, { ...base, urls: [URL1, `${PUBLIC_URL}/assets/files/q8ZxE1m0uR3b9VwK2sTnYc4LdPfAh7Jg/asset.png`] });
    expect(errorOf(res, 400)).toMatch(/^urls\[1\] names an asset that does not exist/);
  });
});

describe.each(backends)('POST /styles/train admission on $name', (backend) => {
  let t: TestApp;
  afterAll(() => t.close());

  it('answers 402 when the balance does not cover the price and 429 when the workspace is full, like any job', async () => {
    // $0.40: one 1000-step flux_dev run ($0.30) fits, a second does not.
    t = await createTestApp({ backend, balanceMicros: 400_000, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 1 } });
    const body = { name: 'x', urls: ['https://example.com/a.png'] };
    expect((await train(t, body)).statusCode).toBe(200);
    const poor = await train(t, body);
    expect(errorOf(poor, 402)).toMatch(/^insufficient API balance: this request costs \$0\.300000/);
    expect(poor.json<Json>().message).toBeTruthy();
    // Cheap runs fill the one slot and the backlog of one.
    expect((await train(t, { ...body, max_train_steps: 10 })).statusCode).toBe(200);
    const full = await train(t, { ...body, max_train_steps: 10 });
    errorOf(full, 429);
    expect(full.headers['retry-after']).toBeDefined();
    await expectLedgerConsistent(t.store, t.workspaceId);
  });
});

describe.each(backends)("a training job's end on $name", (backend) => {
  let t: TestApp;
  afterAll(() => t.close());

  it('creates its style exactly once, however many runs try to complete it', async () => {
    t = await createTestApp({ backend, runPolicy: { leaseMs: 1000 } });
    const { runs } = t.services;
    const res = await train(t, { name: 'Once', urls: ['https://example.com/a.png'] });
    const jobId = res.json<JobJson>().job_id;
    const first = (await runs.claim())!;
    await runs.advance(first, 'scheduled', 'processing');
    await runs.advance(first, 'processing', 'sampling');
    // Its worker stops beating: the reaper hands the job back and a second run takes it.
    t.clock.advance(2000);
    expect(await runs.reap()).toBe(1);
    const second = (await runs.claim())!;
    expect(second.id).toBe(jobId);
    await runs.advance(second, 'scheduled', 'processing');
    await runs.advance(second, 'processing', 'sampling');
    const cover = `/outputs/${second.outputKey}/cover.png`;
    expect(await runs.complete(first, 'sampling', { urls: [cover] }, undefined, { run: 1 })).toMatchObject({ kind: 'lost', why: 'lease_lost', outputsGo: false });
    const done = await runs.complete(second, 'sampling', { urls: [cover] }, undefined, { run: 2 });
    expect(done).toMatchObject({ kind: 'ended', job: { status: 'completed' }, outputsGo: false });
    expect(await runs.complete(second, 'sampling', { urls: [cover] }, undefined, { run: 3 })).toMatchObject({ kind: 'lost', why: 'completed', outputsGo: false });

    const job = (await get(t, `/jobs/${jobId}`)).json<JobJson>();
    expect(job.result).toEqual({ urls: [`${PUBLIC_URL}${cover}`], style_id: expect.any(String) as unknown });
    const styles = (await get(t, '/styles')).json<{ items: Json[] }>().items;
    expect(styles.map((s) => s.id)).toEqual([job.result!.style_id]);
    expect(styles[0]).toMatchObject({ title: 'Once', cover_url: `${PUBLIC_URL}${cover}` });
    expect(await t.services.styles.artifact(job.result!.style_id!)).toEqual({ run: 2 });
    const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === jobId);
    expect(entries.map((e) => e.kind).sort()).toEqual(['charge', 'hold']);
  });

  it("answers input_invalid to a run that loads a style that is not there", async () => {
    await expect(t.services.styles.artifact('0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69')).rejects.toMatchObject({ name: 'EngineError', code: 'input_invalid' });
    await expect(t.services.styles.artifact('watercolor')).rejects.toMatchObject({ code: 'input_invalid' });
  });
});
