import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAL_DEFAULT_BASE_URL, FAL_DEFAULT_JWKS_URL, FAL_DEFAULT_OUTPUTS, FAL_DEFAULT_STORAGE_URL, falAdapter, falAppId, falBaseUrl, falEndpointId } from '../../src/engines/providers/fal-adapter.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { createProviderHttp } from '../../src/engines/providers/provider-http.js';
import type { ProviderAdapter, ProviderSettings } from '../../src/engines/providers/provider-port.js';
import { UpstreamError } from '../../src/engines/upstream/upstream-error.js';
import { systemClock } from '../../src/lib/clock.js';
import { startFakeFal, type FakeFal, type FakeFalOptions } from './fakes/fake-fal.js';

const KEY = '0b6c7c1e-5f8a-4b7e-9c3d-2a1f0e9d8c7b:5e2f9a8b7c6d5e4f3a2b1c0d9e8f7a6b';

let fake: FakeFal;

async function setup(options: FakeFalOptions = {}): Promise<ProviderAdapter> {
  fake = await startFakeFal(options);
  const settings: ProviderSettings = {
    name: 'fal',
    type: 'fal',
    baseUrl: fake.url,
    apiKeyEnv: 'FAL_KEY',
    apiKey: () => KEY,
    storageUrl: fake.storageUrl,
    webhookJwksUrl: `${fake.url}/.well-known/jwks.json`,
    requestTimeoutMs: 5_000,
    maxAttempts: 5,
    pollIntervalMs: 100,
    inlineMaxBytes: 1024,
  };
  const http = createProviderHttp({ type: 'fal', baseUrl: falBaseUrl(settings.baseUrl), apiKey: settings.apiKey, timeoutMs: 5_000, clock: systemClock, trustedOrigins: [fake.storageUrl] });
  return falAdapter(settings, http);
}

async function rejection(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

beforeEach(() => clearFalJwksCache());
afterEach(async () => {
  await fake?.close();
});

describe('fal submissions', () => {
  it('posts the input as JSON to the endpoint id with Key auth and the webhook as fal_webhook', async () => {
    const adapter = await setup();
    const { handle, status } = await adapter.submit({ model: 'fal-ai/flux/dev', input: { prompt: 'a cat', num_images: 1 }, jobId: 'job_1', webhookUrl: 'https://us.example/webhooks/providers/fal?x=1' });
    const call = fake.calls[0]!;
    expect(call.method).toBe('POST');
    expect(new URL(call.path, fake.url).pathname).toBe('/fal-ai/flux/dev');
    expect(new URL(call.path, fake.url).searchParams.get('fal_webhook')).toBe('https://us.example/webhooks/providers/fal?x=1');
    expect(call.headers.authorization).toBe(`Key ${KEY}`);
    expect(call.body).toEqual({ prompt: 'a cat', num_images: 1 });
    expect(fake.requests.get(handle.id)?.webhook).toBe('https://us.example/webhooks/providers/fal?x=1');
    expect(status).toEqual({ state: 'queued', raw: 'IN_QUEUE' });
    // The request URLs fal answered: on the app id, without the endpoint's /dev.
    expect(handle.urls).toEqual({
      status_url: `${fake.url}/fal-ai/flux/requests/${handle.id}/status`,
      response_url: `${fake.url}/fal-ai/flux/requests/${handle.id}`,
      cancel_url: `${fake.url}/fal-ai/flux/requests/${handle.id}/cancel`,
    });
  });

  it('sends no fal_webhook when there is no public URL', async () => {
    const adapter = await setup();
    await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    expect(fake.calls[0]!.path).toBe('/fal-ai/flux/dev');
  });

  it('builds the request URLs from the app id as fal-js does when the answer has none', async () => {
    const adapter = await setup({ bareSubmitAnswer: true });
    const { handle } = await adapter.submit({ model: 'fal-ai/kling-video/v2/master/text-to-video', input: { prompt: 'waves' }, jobId: 'job_1' });
    expect(handle.urls?.status_url).toBe(`${fake.url}/fal-ai/kling-video/requests/${handle.id}/status`);
    expect(await adapter.status(handle)).toEqual({ state: 'queued', raw: 'IN_QUEUE' });
  });

  it('keeps the workflows namespace in the app id and drops only the subpath', () => {
    expect(falAppId('fal-ai/flux/dev')).toBe('fal-ai/flux');
    expect(falAppId('fal-ai/fast-sdxl')).toBe('fal-ai/fast-sdxl');
    expect(falAppId('workflows/someone/my-flow/sub')).toBe('workflows/someone/my-flow');
    expect(falAppId('comfy/someone/graph')).toBe('comfy/someone/graph');
    expect(falAppId('fal-ai/flux-pro/v1.1-ultra')).toBe('fal-ai/flux-pro');
    expect(falAppId('someone/my_app/sub_path')).toBe('someone/my_app');
  });

  it("takes fal's legacy app id `123-alias` as `123/alias`, as fal-js does, for the submission and the request URLs", async () => {
    expect(falEndpointId('12345-my-app')).toBe('12345/my-app');
    expect(falEndpointId('fal-ai/flux/dev')).toBe('fal-ai/flux/dev');
    expect(falAppId('12345-my-app')).toBe('12345/my-app');
    const adapter = await setup({ bareSubmitAnswer: true });
    const { handle } = await adapter.submit({ model: '12345-my-app', input: { prompt: 'a cat' }, jobId: 'job_1' });
    expect(new URL(fake.calls[0]!.path, fake.url).pathname).toBe('/12345/my-app');
    expect(handle.urls?.status_url).toBe(`${fake.url}/12345/my-app/requests/${handle.id}/status`);
    expect(await adapter.status(handle)).toEqual({ state: 'queued', raw: 'IN_QUEUE' });
  });

  it('refuses an endpoint id that is not owner/app[/path] without calling fal', async () => {
    const adapter = await setup();
    for (const model of ['flux', '../admin/x', 'fal-ai/flux?x=1', 'workflows/only', 'https://evil.example/x/y']) {
      expect((await rejection(adapter.submit({ model, input: {}, jobId: 'j' }))).kind).toBe('rejected');
    }
    expect(fake.calls).toHaveLength(0);
  });

  it("uploads to fal's storage at rest.fal.ai by default, as both of fal's clients do; the webhook keys stay where fal publishes them", () => {
    expect(FAL_DEFAULT_STORAGE_URL).toBe('https://rest.fal.ai');
    expect(FAL_DEFAULT_JWKS_URL).toBe('https://rest.alpha.fal.ai/.well-known/jwks.json');
  });

  it('normalises the configured base URL: trailing slash dropped, fal.run replaced by the queue', () => {
    expect(falBaseUrl(undefined)).toBe(FAL_DEFAULT_BASE_URL);
    expect(falBaseUrl('https://queue.fal.run/')).toBe('https://queue.fal.run');
    expect(falBaseUrl('https://fal.run')).toBe('https://queue.fal.run');
    expect(falBaseUrl('http://127.0.0.1:9999/proxy/')).toBe('http://127.0.0.1:9999/proxy');
  });

  it('reads files from images, image, video and audio by default', async () => {
    const adapter = await setup();
    expect(adapter.defaultOutputs).toEqual(FAL_DEFAULT_OUTPUTS);
    expect(FAL_DEFAULT_OUTPUTS).toEqual(['images[*].url', 'image.url', 'video.url', 'audio.url']);
    expect(adapter.synchronous).toBe(false);
  });
});

describe('fal statuses', () => {
  it('maps IN_QUEUE, IN_PROGRESS and COMPLETED, then reads the result from response_url', async () => {
    const adapter = await setup();
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: { prompt: 'a cat' }, jobId: 'job_1' });
    expect(await adapter.status(handle)).toEqual({ state: 'queued', raw: 'IN_QUEUE' });
    expect(await adapter.status(handle)).toEqual({ state: 'running', raw: 'IN_PROGRESS', sampling: true });
    const done = await adapter.status(handle);
    expect(done).toMatchObject({ state: 'succeeded', raw: 'COMPLETED', usage: { inference_time_s: 1.25 } });
    expect(done.state === 'succeeded' && done.output).toEqual({ images: [expect.objectContaining({ url: `${fake.fileHost.url}/outputs/image.png` })], seed: 42 });
    const paths = fake.calls.slice(1).map((c) => `${c.method} ${c.path}`);
    expect(paths).toEqual([
      `GET /fal-ai/flux/requests/${handle.id}/status`,
      `GET /fal-ai/flux/requests/${handle.id}/status`,
      `GET /fal-ai/flux/requests/${handle.id}/status`,
      `GET /fal-ai/flux/requests/${handle.id}`,
    ]);
    expect(fake.calls.every((c) => c.headers.authorization === `Key ${KEY}`)).toBe(true);
  });

  it('stays running while fal holds the request and completes once released', async () => {
    const adapter = await setup({ hold: true });
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    for (let i = 0; i < 4; i++) expect((await adapter.status(handle)).state).toBe('running');
    fake.release(handle.id);
    expect((await adapter.status(handle)).state).toBe('running');
    expect((await adapter.status(handle)).state).toBe('succeeded');
  });

  it('reports a request fal failed as failed with its message, cleaned of the key', async () => {
    const adapter = await setup({ statuses: ['COMPLETED'] });
    fake.failJob(`the prompt was refused for Key ${KEY}`);
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    const status = await adapter.status(handle);
    expect(status.state).toBe('failed');
    const message = status.state === 'failed' ? status.message : '';
    expect(message).toContain('the prompt was refused');
    expect(message).not.toContain(KEY);
  });

  it('reports a failure fal tells only through the response URL (a 4xx with detail) as failed', async () => {
    const adapter = await setup({ statuses: ['COMPLETED'], errorOnStatus: false });
    fake.failJob('field required: prompt');
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    const status = await adapter.status(handle);
    expect(status).toMatchObject({ state: 'failed', raw: 'COMPLETED', usage: { inference_time_s: 1.25 } });
    expect(status.state === 'failed' && status.message).toContain('field required: prompt');
  });

  it('keeps polling through a status fal has not documented, and refuses a status answer without one as malformed', async () => {
    const adapter = await setup({ statuses: ['PAUSED' as 'IN_QUEUE'] });
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    expect(await adapter.status(handle)).toEqual({ state: 'running', raw: 'PAUSED' });
    fake.failNext(1, { status: 200, detail: 'no status here' });
    expect((await rejection(adapter.status(handle))).kind).toBe('malformed');
  });

  it('refuses a stored handle without its URLs as malformed', async () => {
    const adapter = await setup();
    expect((await rejection(adapter.status({ id: 'abc' }))).kind).toBe('malformed');
  });
});

describe('the fake fal', () => {
  it('serves an output of the size asked for, for download caps', async () => {
    await setup();
    const res = await fetch(`${fake.fileHost.url}/big.png?bytes=300000`);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(300_000);
    expect(bytes.subarray(0, 8).equals(fake.png.subarray(0, 8))).toBe(true);
  });
});

describe('fal cancel', () => {
  it('puts to cancel_url, and a request already completed there is not an error', async () => {
    const adapter = await setup({ statuses: ['IN_QUEUE', 'COMPLETED'] });
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    await adapter.cancel(handle);
    expect(fake.cancels).toEqual([handle.id]);
    expect(fake.calls.at(-1)).toMatchObject({ method: 'PUT', path: `/fal-ai/flux/requests/${handle.id}/cancel` });
    const second = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_2' });
    await adapter.status(second.handle);
    await adapter.status(second.handle);
    await expect(adapter.cancel(second.handle)).resolves.toBeUndefined();
    expect(fake.cancels).toEqual([handle.id, second.handle.id]);
  });

  it('surfaces a cancel fal could not take (5xx) as unavailable', async () => {
    const adapter = await setup();
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    fake.failNext(1, { status: 503 });
    expect((await rejection(adapter.cancel(handle))).kind).toBe('unavailable');
  });
});

describe('fal storage upload', () => {
  it('initiates with the key, puts the bytes to the presigned URL without it, and answers the file URL', async () => {
    const adapter = await setup();
    const bytes = Buffer.from(fake.png);
    const fileUrl = await adapter.upload!(bytes, 'image/png', 'input.png');
    const [initiate, put] = fake.calls;
    expect(initiate).toMatchObject({ method: 'POST', path: '/storage/upload/initiate?storage_type=fal-cdn-v3', body: { content_type: 'image/png', file_name: 'input.png' } });
    expect(initiate!.headers.authorization).toBe(`Key ${KEY}`);
    expect(put).toMatchObject({ method: 'PUT', path: '/upload/1' });
    expect(put!.headers.authorization).toBeUndefined();
    expect(put!.headers['content-type']).toBe('image/png');
    expect(fileUrl).toBe(`${fake.fileHost.url}/files/1`);
    const served = Buffer.from(await (await fetch(fileUrl)).arrayBuffer());
    expect(served.equals(bytes)).toBe(true);
  });

  it('refuses an initiate answer without the two URLs as malformed', async () => {
    const adapter = await setup();
    fake.failNext(1, { status: 200, detail: 'nothing' });
    expect((await rejection(adapter.upload!(Buffer.from('x'), 'image/png', 'a.png'))).kind).toBe('malformed');
  });
});

describe('fal webhooks', () => {
  it('accepts a webhook signed with a key of the JWKS and names the request', async () => {
    const adapter = await setup({ statuses: ['COMPLETED'] });
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    const { headers, body } = fake.webhookFor(handle.id);
    expect(JSON.parse(body)).toMatchObject({ request_id: handle.id, gateway_request_id: handle.id, status: 'OK', payload: { images: [expect.any(Object)] } });
    expect(await adapter.verifyWebhook!(headers, Buffer.from(body), Date.now())).toEqual({ upstreamId: handle.id });
    // Header names as any case; the JWKS is fetched once and cached.
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await adapter.verifyWebhook!(upper, Buffer.from(body), Date.now())).toEqual({ upstreamId: handle.id });
    expect(fake.calls.filter((c) => c.path === '/.well-known/jwks.json')).toHaveLength(1);
  });

  it('refuses forged, foreign-key, stale, tampered and unsigned webhooks', async () => {
    const adapter = await setup();
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    for (const forge of ['signature', 'other-key', 'stale', 'tampered'] as const) {
      const { headers, body } = fake.webhookFor(handle.id, forge);
      expect(await adapter.verifyWebhook!(headers, Buffer.from(body), Date.now()), forge).toBeUndefined();
    }
    const { headers, body } = fake.webhookFor(handle.id);
    expect(await adapter.verifyWebhook!(headers, Buffer.from(body), Date.now() + 6 * 60_000), 'from the future').toBeUndefined();
    expect(await adapter.verifyWebhook!({ ...headers, 'x-fal-webhook-signature': undefined }, Buffer.from(body), Date.now()), 'unsigned').toBeUndefined();
    expect(await adapter.verifyWebhook!({ ...headers, 'x-fal-webhook-user-id': 'someone-else' }, Buffer.from(body), Date.now()), 'other user').toBeUndefined();
  });

  it('refuses every webhook when the JWKS cannot be fetched', async () => {
    const adapter = await setup();
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    const { headers, body } = fake.webhookFor(handle.id);
    await fake.close();
    expect(await adapter.verifyWebhook!(headers, Buffer.from(body), Date.now())).toBeUndefined();
  });

  it('sends a signed webhook to fal_webhook when a request completes, which the adapter accepts', async () => {
    const received: { headers: Record<string, string | undefined>; body: Buffer }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string | undefined>, body: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const adapter = await setup({ hold: true });
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/providers/fal`;
      const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1', webhookUrl: hook });
      expect(await fake.complete(handle.id)).toBe(200);
      expect(await fake.sendWebhook(handle.id, 'signature')).toBe(200);
      expect(received).toHaveLength(2);
      expect(await adapter.verifyWebhook!(received[0]!.headers, received[0]!.body, Date.now())).toEqual({ upstreamId: handle.id });
      expect(await adapter.verifyWebhook!(received[1]!.headers, received[1]!.body, Date.now())).toBeUndefined();
      expect((await adapter.status(handle)).state).toBe('succeeded');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe('fal errors', () => {
  it('surfaces 429 with Retry-After as unavailable with the delay', async () => {
    const adapter = await setup();
    fake.failNext(1, { status: 429, retryAfter: '7', detail: 'Too many requests' });
    const err = await rejection(adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' }));
    expect(err.kind).toBe('unavailable');
    expect(err.retryAfterMs).toBe(7_000);
    expect(fake.submissions()).toBe(0);
  });

  it('surfaces 500 on a status poll as unavailable', async () => {
    const adapter = await setup();
    const { handle } = await adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' });
    fake.failNext(1, { status: 500 });
    expect((await rejection(adapter.status(handle))).kind).toBe('unavailable');
    expect((await adapter.status(handle)).state).toBe('queued');
  });

  it("surfaces a 4xx on submit as rejected with fal's detail and never the key", async () => {
    const adapter = await setup();
    fake.failNext(1, { status: 422, detail: `image_size is not one of square_hd, landscape_4_3 (key ${KEY})` });
    const err = await rejection(adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' }));
    expect(err.kind).toBe('rejected');
    expect(err.status).toBe(422);
    expect(err.message).toContain('image_size is not one of square_hd');
    expect(err.message).not.toContain(KEY);
  });

  it('refuses a body that is not JSON, and a submit answer without request_id, as malformed', async () => {
    const adapter = await setup();
    fake.failNext(1, { malformed: true });
    expect((await rejection(adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' }))).kind).toBe('malformed');
    fake.failNext(1, { status: 200, detail: 'queued, trust me' });
    expect((await rejection(adapter.submit({ model: 'fal-ai/flux/dev', input: {}, jobId: 'job_1' }))).kind).toBe('malformed');
  });
});
