import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { uploadAsset } from '../helpers/asset-files.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { startFakeFal } from './fakes/fake-fal.js';
import type { FakeFal } from './fakes/fake-fal.js';

/** Whole job runs at a fake fal (written from fal's queue, storage and webhook documentation). */

const EDIT = 'image/acme/fal-edit-v1';
const MODEL = {
  path: EDIT,
  kind: 'image',
  request: {
    type: 'object',
    properties: {
      prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' },
      image_url: { type: 'string', format: 'media-url', description: 'An image to start from.' },
    },
    required: ['prompt'],
  },
  price: { fixed: '0.03' },
  engine: 'provider:up',
  upstream: { model: 'fal-ai/flux/dev/image-to-image', input: { prompt: '{{prompt}}', image_url: '{{image_url}}', num_images: 1 } },
};

const ended = (t: TestApp, id: string, timeoutMs = 20_000) => jobEnd(t, id, timeoutMs);
const statusOf = async (t: TestApp, id: string) => (await get(t, `/jobs/${id}`)).json<{ status: string }>().status;

describe('provider runs at fal', { timeout: 60_000 }, () => {
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

  /** An app listening on loopback at its public URL, so fal's webhooks reach it. */
  async function falApp(extra: Json = {}, publicUrl = true) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const app = await createTestApp({
      realClock: true,
      // Outputs are on the provider's file host, another loopback address: the address guard (--allow-private-urls) lets it through.
      allowPrivateUrls: true,
      models: [MODEL],
      providers: {
        providers: { up: { type: 'fal', base_url: fal.url, api_key_env: 'FAL_KEY', storage_url: fal.storageUrl, webhook_jwks_url: `${fal.url}/.well-known/jwks.json`, ...extra } },
        env: { FAL_KEY: 'fal-key-id:0123456789abcdef0123' },
        ...(publicUrl ? { publicUrl: url } : {}),
      },
      worker: { pollMs: 50, log: silentLog },
    });
    await app.app.listen({ port, host: '127.0.0.1' });
    return { app, url };
  }

  const create = async (app: TestApp, body: Json = { prompt: 'a fox' }) => {
    const res = await generate(app, EDIT, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };

  it("completes a held request as soon as fal's signed webhook arrives, long before the next poll", async () => {
    const { app, url } = await falApp({ poll_interval_ms: 60_000 });
    t = app;
    const id = await create(t);
    // Submitted (queued at fal): the run now waits its first 10 s poll interval.
    const requestId = (await waitFor(async () => t!.store.upstreams.find(id), 'the request to be submitted to fal')).id;
    expect(fal.requests.get(requestId)!.webhook).toBe(`${url}/providers/up/webhook`);
    expect(await fal.complete(requestId)).toBe(200);
    // Polling alone would look again only 10 s after the last poll.
    const job = await ended(t, id, 8000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const file = await t.app.inject({ method: 'GET', url: new URL((job.result as { urls: string[] }).urls[0]!).pathname });
    expect((await sharp(file.rawPayload).metadata()).format).toBe('png');
  });

  it('refuses forged, stale and tampered webhooks with 401, and one for a provider without webhooks with 404', async () => {
    const { app, url } = await falApp();
    t = app;
    const id = await create(t);
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling at fal');
    const requestId = (await t.store.upstreams.find(id))!.id;
    for (const forge of ['signature', 'stale', 'tampered', 'other-key'] as const) {
      const { headers, body } = fal.webhookFor(requestId, forge);
      const res = await fetch(`${url}/providers/up/webhook`, { method: 'POST', headers, body });
      expect(res.status, forge).toBe(401);
      expect(await res.json()).toEqual({ error: 'the webhook signature does not verify' });
    }
    const { headers, body } = fal.webhookFor(requestId);
    expect((await fetch(`${url}/providers/nobody/webhook`, { method: 'POST', headers, body })).status).toBe(404);
    expect((await fetch(`${url}/providers/up/webhook`, { method: 'POST', headers, body })).status).toBe(200);
    fal.release(requestId);
  });

  it("polls to completion without a public URL (no webhook asked), and sends a large input through fal's storage", async () => {
    const { app } = await falApp({ inline_max_bytes: 16, poll_interval_ms: 20 }, false);
    t = app;
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3070c0' } }).png().toBuffer();
    const uploaded = await uploadAsset(t.app, t.token, { bytes: png, filename: 'in.png', type: 'image/png' });
    const id = await create(t, { prompt: 'a fox', image_url: uploaded.json<{ image_url: string }>().image_url });
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling at fal');
    const requestId = (await t.store.upstreams.find(id))!.id;
    const sent = fal.requests.get(requestId)!;
    expect(sent.webhook ?? null).toBeNull();
    const inputUrl = (sent.input as { image_url: string }).image_url;
    expect(inputUrl.startsWith(`${fal.fileHost.url}/files/`)).toBe(true);
    expect(fal.files.get(new URL(inputUrl).pathname)!.bytes.equals(png)).toBe(true);
    fal.release(requestId);
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
  });

  it("cancelling the job calls fal's cancel_url", async () => {
    const { app } = await falApp({ poll_interval_ms: 20 }, false);
    t = app;
    const id = await create(t);
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling at fal');
    const requestId = (await t.store.upstreams.find(id))!.id;
    const res = await checkedInject(t.app, { method: 'DELETE', url: `/jobs/${id}`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => fal.cancels.includes(requestId), 'the cancel to reach fal');
  });

  it('fails upstream_failed with the message of a request fal failed', async () => {
    const { app } = await falApp({ poll_interval_ms: 20 }, false);
    t = app;
    const id = await create(t);
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling at fal');
    const requestId = (await t.store.upstreams.find(id))!.id;
    fal.failJob('CUDA out of memory', requestId);
    fal.release(requestId);
    const job = await ended(t, id);
    expect(job.error).toMatchObject({ code: 'upstream_failed' });
    expect((job.error as { message: string }).message).toContain('CUDA out of memory');
  });
});
