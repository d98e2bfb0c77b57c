import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { replicateAdapter, progressOf, clearReplicateSecrets, statusOf, SECRET_REFRESH_MIN_MS } from '../../src/engines/providers/replicate-adapter.js';
import { createProviderHttp } from '../../src/engines/providers/provider-http.js';
import { systemClock } from '../../src/lib/clock.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeReplicate } from './fakes/fake-replicate.js';
import type { FakeReplicate } from './fakes/fake-replicate.js';

/** The Replicate adapter's mapping, and whole job runs at a fake Replicate (fakes/fake-replicate.ts). */

const MODEL = 'image/vendor-b/model-b-1';
const EDIT = 'image/acme/rep-edit-v1';

describe('Replicate statuses', () => {
  it('maps every documented status, progress from the logs and usage from the metrics', () => {
    expect(statusOf({ id: 'p', status: 'starting' })).toEqual({ state: 'queued', raw: 'starting' });
    expect(statusOf({ id: 'p', status: 'processing', logs: '  0%|   | 0/28\n 46%|███ | 13/28' })).toEqual({ state: 'running', raw: 'processing', sampling: true, progress: 0.46 });
    expect(statusOf({ id: 'p', status: 'succeeded', output: ['u'], metrics: { predict_time: 2.5 } })).toMatchObject({ state: 'succeeded', usage: { predict_time: 2.5 } });
    expect(statusOf({ id: 'p', status: 'failed', error: 'CUDA out of memory\nTraceback (most recent call last):' })).toMatchObject({ state: 'failed', message: 'CUDA out of memory' });
    expect(statusOf({ id: 'p', status: 'canceled' })).toEqual({ state: 'cancelled', raw: 'canceled' });
    expect(statusOf({ id: 'p', status: 'aborted' })).toEqual({ state: 'cancelled', raw: 'aborted' });
    expect(() => statusOf({ id: 'p' })).toThrow('the prediction has no status');
    expect(progressOf('no bar here')).toBeUndefined();
    expect(replicateAdapter).toBeTypeOf('function');
  });
});

describe('provider runs at Replicate', { timeout: 60_000 }, () => {
  let rep: FakeReplicate;
  let t: TestApp | undefined;
  beforeAll(async () => {
    rep = await startFakeReplicate();
  });
  afterAll(() => rep?.close());
  afterEach(async () => {
    await t?.close();
    t = undefined;
    rep.hold = false;
    clearReplicateSecrets();
  });

  async function repApp(upstream: Json, opts: { publicUrl?: boolean; extra?: Json; models?: unknown[]; bind?: boolean } = {}) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const app = await createTestApp({
      realClock: true,
      // Outputs are on the provider's file host, another loopback address: the address guard (--allow-private-urls) lets it through.
      allowPrivateUrls: true,
      ...(opts.bind === false ? {} : { modelEngines: { [MODEL]: 'provider:rep' } }),
      ...(opts.models ? { models: opts.models } : {}),
      providers: {
        providers: { rep: { type: 'replicate', base_url: rep.url, api_key_env: 'REPLICATE_API_TOKEN', poll_interval_ms: 20, ...opts.extra } },
        upstream: opts.bind === false ? {} : { [MODEL]: upstream },
        env: { REPLICATE_API_TOKEN: rep.token },
        ...(opts.publicUrl ? { publicUrl: url } : {}),
      },
      worker: { pollMs: 50, log: silentLog },
    });
    await app.app.listen({ port, host: '127.0.0.1' });
    return { app, url };
  }
  const ended = (app: TestApp, id: string, timeoutMs = 20_000) => jobEnd(app, id, timeoutMs);
  const create = async (app: TestApp, path = MODEL, body: Json = { prompt: 'a red fox' }) => {
    const res = await generate(app, path, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };

  it('runs an official model by name with its template, polls to succeeded, stores the PNG and keeps predict_time', async () => {
    ({ app: t } = await repApp({ model: 'black-forest-labs/flux-schnell', input: { prompt: '{{prompt}}', num_outputs: 1, output_format: 'png' } }));
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = rep.requests.find((r) => r.method === 'POST' && r.path === '/v1/models/black-forest-labs/flux-schnell/predictions')!;
    expect(sent.headers.authorization).toBe(`Bearer ${rep.token}`);
    expect(sent.body).toEqual({ input: { prompt: 'a red fox', num_outputs: 1, output_format: 'png' } });
    const file = await t.app.inject({ method: 'GET', url: new URL((job.result as { urls: string[] }).urls[0]!).pathname });
    expect((await sharp(file.rawPayload).metadata()).format).toBe('png');
    const details = (await get(t, `/jobs/${id}/details`)).json<{ upstream: Json }>();
    expect(details.upstream).toMatchObject({ provider: 'rep', status: 'succeeded', usage: { predict_time: 2.31 } });
  });

  it('runs a version by id, and a webhook it signed makes the run look at once; forged and stale ones get 401', async () => {
    let url: string;
    ({ app: t, url } = await repApp({ model: 'stability-ai/sdxl:39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b' }, { publicUrl: true, extra: { poll_interval_ms: 60_000 } }));
    rep.hold = true;
    const id = await create(t);
    const predictionId = (await waitFor(async () => t!.store.upstreams.find(id), 'the prediction to be stored')).id;
    const p = rep.predictions.get(predictionId)!;
    expect(p.version).toBe('39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b');
    expect(p.webhook).toBe(`${url}/providers/rep/webhook`);
    for (const forge of ['signature', 'stale', 'other-secret'] as const) {
      const { headers, body } = rep.webhookFor(predictionId, forge);
      expect((await fetch(p.webhook!, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })).status, forge).toBe(401);
    }
    expect(await rep.finish(predictionId)).toBe(200);
    // Polling alone would look again only 10 s after submitting.
    const job = await ended(t, id, 8000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
  });

  it('runs a deployment named deployment:owner/name through its predictions endpoint, as replicate-javascript does', async () => {
    ({ app: t } = await repApp({ model: 'deployment:acme/flux-prod', input: { prompt: '{{prompt}}' } }));
    const job = await ended(t, await create(t));
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = rep.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/predictions')).at(-1)!;
    expect(sent.path).toBe('/v1/deployments/acme/flux-prod/predictions');
    expect(sent.body).toEqual({ input: { prompt: 'a red fox' } });
    expect([...rep.predictions.values()].at(-1)!.deployment).toBe('acme/flux-prod');
  });

  it('fetches the webhook secret again when a fresh delivery does not verify (a rotation), at most once a minute', async () => {
    const settings = { name: 'rep', type: 'replicate' as const, baseUrl: `${rep.url}/v1`, apiKeyEnv: 'REPLICATE_API_TOKEN', apiKey: () => rep.token, requestTimeoutMs: 5000, maxAttempts: 5, pollIntervalMs: 20, inlineMaxBytes: 1024 };
    const adapter = replicateAdapter(settings, createProviderHttp({ type: 'replicate', baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs: 5000, clock: systemClock }));
    const { handle } = await adapter.submit({ model: 'owner/model', input: { prompt: 'x' }, jobId: 'job_1' });
    const fetches = () => rep.requests.filter((r) => r.path === '/v1/webhooks/default/secret').length;
    const before = fetches();
    const deliver = (forge: 'other-secret' | undefined, nowMs: number) => {
      const { headers, body } = rep.webhookFor(handle.id, forge);
      return adapter.verifyWebhook!(headers, Buffer.from(body), nowMs);
    };
    const now = Date.now();
    expect(await deliver(undefined, now)).toEqual({ upstreamId: handle.id });
    expect(fetches()).toBe(before + 1);
    rep.rotateSecret();
    // Signed with the new secret: the cached one fails it, the secret is fetched again, it verifies.
    expect(await deliver(undefined, now + SECRET_REFRESH_MIN_MS)).toEqual({ upstreamId: handle.id });
    expect(fetches()).toBe(before + 2);
    // Forged deliveries within the minute cost no call to Replicate; after it, one.
    expect(await deliver('other-secret', now + SECRET_REFRESH_MIN_MS + 1000)).toBeUndefined();
    expect(await deliver('other-secret', now + SECRET_REFRESH_MIN_MS + 2000)).toBeUndefined();
    expect(fetches()).toBe(before + 2);
    expect(await deliver('other-secret', now + 2 * SECRET_REFRESH_MIN_MS + 1000)).toBeUndefined();
    expect(fetches()).toBe(before + 3);
    // The secret still verifies a genuine delivery.
    expect(await deliver(undefined, now + 2 * SECRET_REFRESH_MIN_MS + 2000)).toEqual({ upstreamId: handle.id });
    expect(fetches()).toBe(before + 3);
  });

  it("sends an input larger than inline_max_bytes through Replicate's files API", async () => {
    const model = {
      path: EDIT,
      kind: 'image',
      request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 100, description: 'p' }, image_url: { type: 'string', format: 'media-url', description: 'i' } }, required: ['prompt', 'image_url'] },
      price: { fixed: '0.02' },
      engine: 'provider:rep',
      upstream: { model: 'owner/img2img', input: { prompt: '{{prompt}}', image: '{{image_url}}' } },
    };
    ({ app: t } = await repApp({}, { bind: false, models: [model], extra: { inline_max_bytes: 16 } }));
    const png = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#102030' } }).png().toBuffer();
    const asset = (await uploadAsset(t.app, t.token, { bytes: png, filename: 'in.png', type: 'image/png' })).json<{ image_url: string }>().image_url;
    const job = await ended(t, await create(t, EDIT, { prompt: 'x', image_url: asset }));
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const input = [...rep.predictions.values()].at(-1)!.input as { image: string };
    expect(input.image).toMatch(new RegExp(`^${rep.url}/v1/files/[0-9a-f]+/content$`));
    const [stored] = [...rep.files.values()].slice(-1);
    expect(stored!.bytes.equals(png)).toBe(true);
    expect(stored!.type).toBe('image/png');
  });

  it('cancels the prediction when the job is cancelled, and maps a failed one to upstream_failed', async () => {
    ({ app: t } = await repApp({ model: 'owner/model' }));
    rep.hold = true;
    const id = await create(t);
    const predictionId = (await waitFor(async () => t!.store.upstreams.find(id), 'the prediction to be stored')).id;
    await checkedInject(t.app, { method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } });
    await waitFor(async () => rep.cancels.includes(predictionId), 'the cancel to reach Replicate');

    const second = await create(t);
    const secondId = (await waitFor(async () => t!.store.upstreams.find(second), 'the prediction to be stored')).id;
    await rep.finish(secondId, 'NSFW content detected. Try running it again, or try a different prompt.');
    const failed = await ended(t, second);
    expect(failed.error).toEqual({ code: 'upstream_failed', message: 'the provider failed the job: NSFW content detected. Try running it again, or try a different prompt.' });
  });
});
