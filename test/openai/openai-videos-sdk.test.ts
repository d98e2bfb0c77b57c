import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { readMp4Info } from '../helpers/media.js';
import { DEFAULT_OPENAI_SETTINGS } from '../../src/config/openai-settings.js';
import { createOpenAiDoor } from '../../src/services/openai/openai-door.js';
import { waitFor } from '../helpers/scripted-engine.js';

/**
 * OpenAI's Videos API as its own clients use it: the official `openai` npm SDK (and, at the end, a
 * plain urllib script in Python) against this server listening on loopback, its jobs run by the
 * local engine. Files are checked by their headers; money by the ledger.
 */
const D_FAST = 'video/vendor-d/model-d-fast';
const MODEL_F = 'video/vendor-f/model-f';
const E1 = 'video/vendor-e/model-e-1';
const run = promisify(execFile);

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#2060d0' } }).png().toBuffer();
}

async function listen(t: TestApp): Promise<{ base: string; client: OpenAI }> {
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { base, client: new OpenAI({ apiKey: t.token, baseURL: `${base}/v1`, maxRetries: 0 }) };
}

async function finished(client: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  return waitFor(async () => {
    const v = await client.videos.retrieve(id);
    expect(v.progress).toBeGreaterThanOrEqual(0);
    expect(v.progress).toBeLessThanOrEqual(100);
    return v.status === 'completed' || v.status === 'failed' ? v : undefined;
  }, `video ${id} to end`, 150_000);
}

describe.each(backends)('the OpenAI Videos API through the official SDK on $name', { timeout: 240_000 }, (backend) => {
  let t: TestApp;
  let base: string;
  let client: OpenAI;

  beforeAll(async () => {
    t = await createTestApp({ backend, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2 } });
    ({ base, client } = await listen(t));
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('videos.create answers a queued video; retrieve follows it to completed; downloadContent is an MP4 of the asked seconds and size, and its thumbnail a WebP', async () => {
    const created = await client.videos.create({ model: D_FAST, prompt: 'a paper boat on a pond', seconds: '4' as OpenAI.Videos.VideoSeconds, size: '720x1280' });
    expect(created).toMatchObject({ object: 'video', model: D_FAST, status: 'queued', progress: 0, completed_at: null, error: null, seconds: '4', size: '720x1280', prompt: 'a paper boat on a pond' });
    expect(Number.isInteger(created.created_at)).toBe(true);
    const done = await finished(client, created.id);
    expect(done).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    // output_retention_days defaults to 30: the files are served until then.
    expect(done.expires_at).toBe(done.completed_at! + 30 * 86_400);

    const file = Buffer.from(await (await client.videos.downloadContent(created.id)).arrayBuffer());
    const track = readMp4Info(file).tracks.find((tr) => tr.kind === 'video')!;
    expect(track).toMatchObject({ codec: 'avc1', width: 720, height: 1280 });
    expect(track.durationSec).toBeCloseTo(4, 1);

    const res = await client.videos.downloadContent(created.id, { variant: 'thumbnail' });
    expect(res.headers.get('content-type')).toBe('image/webp');
    const webp = Buffer.from(await res.arrayBuffer());
    expect(webp.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(webp.subarray(8, 12).toString('latin1')).toBe('WEBP');
    expect(await sharp(webp).metadata()).toMatchObject({ format: 'webp', width: 360, height: 640 });

    // The same job natively, with the body the mapping made, billed once at the native price.
    expect((await get(t, `/jobs/${created.id}`)).json()).toMatchObject({ type: D_FAST, status: 'completed' });
    const details = (await get(t, `/jobs/${created.id}/details`)).json() as { request: Record<string, unknown> };
    expect(details.request).toMatchObject({ prompt: 'a paper boat on a pond', duration: 4, aspect_ratio: '9:16', resolution: '720p' });
    const charges = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === created.id && e.kind === 'charge');
    // model-d-fast: $0.105 per second without audio (spec 8).
    expect(charges.map((c) => c.amountMicros)).toEqual([4 * 105_000]);
  });

  it("reports the frames a model renders where its fields do not say them: model-e-1 in mode pro, made natively, is 1080p", async () => {
    const res = await generate(t, E1, { prompt: 'a harbour at night', mode: 'pro', aspect_ratio: '16:9' });
    const id = (res.json() as { job_id: string }).job_id;
    // Before it runs, as the model will render it; once done, as the file is.
    expect(await client.videos.retrieve(id)).toMatchObject({ model: E1, size: '1920x1080', seconds: '5' });
    const done = await finished(client, id);
    const track = readMp4Info(Buffer.from(await (await client.videos.downloadContent(id)).arrayBuffer())).tracks.find((tr) => tr.kind === 'video')!;
    expect(`${track.width}x${track.height}`).toBe(done.size);
    expect(track.durationSec).toBeCloseTo(Number(done.seconds), 1);
  });

  it('an input_reference file becomes an asset that the model reads as its start image', async () => {
    const created = await client.videos.create({ model: D_FAST, prompt: 'from this frame', seconds: '4' as OpenAI.Videos.VideoSeconds, size: '720x720' as OpenAI.Videos.VideoSize, input_reference: await toFile(await png(320, 180), 'first.png', { type: 'image/png' }) });
    const details = (await get(t, `/jobs/${created.id}/details`)).json() as { request: Record<string, unknown> };
    expect(String(details.request.start_image)).toMatch(/\/assets\/files\/[A-Za-z0-9_-]{32}\/asset\.png$/);
    expect((await finished(client, created.id)).status).toBe('completed');
    // A model without an image input refuses it, naming the field.
    const refused = await client.videos
      .create({ model: 'video/vendor-c/model-c-edit', prompt: 'x', input_reference: await toFile(await png(64, 64), 'a.png', { type: 'image/png' }) })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('the same requests from a plain Python urllib client', async () => {
    const image = join(t.dir, 'reference.png');
    await writeFile(image, await png(320, 180));
    const { stdout } = await run('python3', [join(__dirname, 'videos_client.py'), `${base}/v1`, t.token, D_FAST, image], { timeout: 200_000 });
    const report = JSON.parse(stdout) as { json: { id: string; seconds: string; size: string; model: string }; mp4_bytes: number; listed_asc: string[]; deleted: string };
    expect(report.json).toMatchObject({ seconds: '4', size: '1280x720', model: D_FAST });
    expect(report.mp4_bytes).toBeGreaterThan(1000);
    // The script's videos are the newest, so its ascending walk ends with them.
    expect(report.listed_asc).toContain(report.json.id);
    expect((await get(t, `/jobs/${report.json.id}`)).statusCode).toBe(200);
    expect((await get(t, `/jobs/${report.deleted}`)).statusCode).toBe(404);
  });
});

describe.each(backends)('the OpenAI Videos API without a worker (jobs stay queued) on $name', (backend) => {
  let t: TestApp;
  let base: string;
  let client: OpenAI;

  beforeAll(async () => {
    t = await createTestApp({ backend, openai: { models: { 'sora-2': D_FAST }, default_video_model: 'sora-2' } });
    ({ base, client } = await listen(t));
  }, 60_000);

  it("takes an alias of the config's openai.models as model, and openai.default_video_model when model is left out, and reports the id sent", async () => {
    const aliased = await client.videos.create({ model: 'sora-2', prompt: 'by alias', seconds: '8' as OpenAI.Videos.VideoSeconds, size: '1280x720' });
    expect(aliased).toMatchObject({ model: 'sora-2', seconds: '8', size: '1280x720', status: 'queued' });
    const byDefault = await client.videos.create({ prompt: 'by default' });
    // model-d-fast's own defaults: 8 s at 16:9, 720p; the default is named by its alias.
    expect(byDefault).toMatchObject({ model: 'sora-2', seconds: '8', size: '1280x720' });
    const byPath = await client.videos.create({ model: D_FAST, prompt: 'by path' });
    expect(byPath.model).toBe(D_FAST);
    expect((await get(t, `/jobs/${aliased.id}`)).json()).toMatchObject({ type: D_FAST, status: 'queued' });
    expect((await client.videos.retrieve(aliased.id)).model).toBe('sora-2');
    const listed = new Map<string, string>();
    for await (const v of client.videos.list({ limit: 100 })) listed.set(v.id, v.model);
    expect([listed.get(aliased.id), listed.get(byDefault.id), listed.get(byPath.id)]).toEqual(['sora-2', 'sora-2', D_FAST]);
    // The same store read by a server whose config has lost the alias: the video reads back as created.
    const forgetful = createOpenAiDoor({ ...t.services, store: t.store, settings: DEFAULT_OPENAI_SETTINGS, retention: { outputDays: 0, jobDays: 0 } });
    const caller = await t.services.identity.authenticate(`Bearer ${t.token}`);
    expect(await forgetful.videos.get(caller, aliased.id)).toMatchObject({ model: 'sora-2', seconds: '8', size: '1280x720' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('videos.list pages by after and limit, newest first or oldest first, and lists only video jobs', async () => {
    const ids: string[] = [];
    for (const prompt of ['one', 'two', 'three']) ids.push((await client.videos.create({ model: MODEL_F, prompt })).id);
    // A native image job is no video.
    expect((await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'not a video', aspect_ratio: '1:1', resolution: '1K' })).statusCode).toBe(200);
    const asc: string[] = [];
    for await (const v of client.videos.list({ limit: 2, order: 'asc' })) asc.push(v.id);
    const desc: string[] = [];
    for await (const v of client.videos.list({ limit: 2 })) desc.push(v.id);
    // Oldest first, the three just made come last; newest first, first.
    expect(asc.slice(-3)).toEqual(ids);
    expect(desc).toEqual([...asc].reverse());
    expect(new Set(asc).size).toBe(asc.length);
    const page = await client.videos.list({ limit: 1, order: 'asc', after: ids[0] });
    expect(page.data.map((v) => v.id)).toEqual([ids[1]]);
    expect(page.has_more).toBe(true);
  });

  it('videos.delete cancels a queued video (its hold released, nothing charged) and removes it; it is then an SDK NotFoundError', async () => {
    const v = await client.videos.create({ model: MODEL_F, prompt: 'gone soon' });
    expect(await client.videos.delete(v.id)).toEqual({ id: v.id, object: 'video.deleted', deleted: true });
    const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === v.id);
    // model-f: $0.4515 per request (spec 8), held at the create and released by the cancel.
    expect(entries.map((e) => [e.kind, e.amountMicros]).sort()).toEqual([['hold', 451_500], ['release', 451_500]]);
    const err = await client.videos.retrieve(v.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await get(t, `/jobs/${v.id}`)).statusCode).toBe(404);
  });

  it("refusals reach the SDK as its typed errors, naming OpenAI's parameter", async () => {
    const unknownVideo = (await client.videos.retrieve('0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(unknownVideo).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknownVideo.type).toBe('invalid_request_error');
    const unknownModel = (await client.videos.create({ model: 'video/vendor-z/none', prompt: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(unknownModel).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknownModel.code).toBe('model_not_found');
    const badSeconds = (await client.videos.create({ model: D_FAST, prompt: 'x', seconds: '5' as OpenAI.Videos.VideoSeconds }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(badSeconds).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badSeconds.param).toBe('seconds');
    // model-f has one fixed shape: no size and no duration to set.
    const badSize = (await client.videos.create({ model: MODEL_F, prompt: 'x', size: '1280x720' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(badSize).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badSize.param).toBe('size');
    const imageModel = (await client.videos.create({ model: 'image/vendor-a/model-a-2/medium', prompt: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(imageModel).toBeInstanceOf(OpenAI.BadRequestError);
    expect(imageModel.param).toBe('model');
    const spritesheet = await client.videos.downloadContent('0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', { variant: 'spritesheet' }).catch((e: unknown) => e);
    expect(spritesheet).toBeInstanceOf(OpenAI.BadRequestError);
    const badToken = new OpenAI({ apiKey: 'mg_not_a_token', baseURL: `${base}/v1`, maxRetries: 0 });
    expect(await badToken.videos.list().catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('an Idempotency-Key makes a retried create, file and all, answer the same video', async () => {
    const key = `videos-${backend.name}-${Date.now()}`;
    const image = await png(160, 90);
    const send = () =>
      client.videos
        .create({ model: D_FAST, prompt: 'once', input_reference: toFile(image, 'f.png', { type: 'image/png' }) as never }, { headers: { 'Idempotency-Key': key } })
        .withResponse();
    const first = await send();
    const second = await send();
    expect(second.data.id).toBe(first.data.id);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
  });

  it('X-Webhook-URL is taken as on a native create', async () => {
    const v = await client.videos.create({ model: MODEL_F, prompt: 'hook' }, { headers: { 'X-Webhook-URL': 'https://hooks.example.com/mediagen' } });
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    expect((await t.store.jobs.getJob(auth.apiUserId, v.id))?.webhookUrl).toBe('https://hooks.example.com/mediagen');
  });

});

describe.each(backends)("the OpenAI Videos API's balance and limit refusals on $name", (backend) => {
  it('a balance too low is RateLimitError insufficient_quota; a full workspace is RateLimitError rate_limit_exceeded; unfinished content is a BadRequestError', async () => {
    const poor = await createTestApp({ backend, balanceMicros: 0 });
    const full = await createTestApp({ backend, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 } });
    try {
      const p = await listen(poor);
      const quota = (await p.client.videos.create({ model: MODEL_F, prompt: 'x' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(quota).toBeInstanceOf(OpenAI.RateLimitError);
      expect(quota.code).toBe('insufficient_quota');
      const f = await listen(full);
      const queued = await f.client.videos.create({ model: MODEL_F, prompt: 'first' });
      const limited = (await f.client.videos.create({ model: MODEL_F, prompt: 'second' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
      expect(limited.code).toBe('rate_limit_exceeded');
      // No worker runs here: the first is still queued, so it has no content yet.
      expect(await f.client.videos.downloadContent(queued.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.BadRequestError);
    } finally {
      await poor.close();
      await full.close();
    }
  });
});
