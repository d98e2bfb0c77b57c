import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { Receiver } from '../helpers/receiver.js';
import { native, startLive } from './openai-live.js';
import type { LiveServer } from './openai-live.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
/** The official SDK as an application configures it: base URL and token; no retries, so each refusal is seen once. */
const sdk = (s: LiveServer, apiKey = s.t.token) => new OpenAI({ apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 120_000 });

async function pngOf(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** What the SDK threw, as the application sees it: its class, status, code and param. */
async function refusal(p: Promise<unknown>): Promise<{ error: unknown; status?: number; code?: string | null; param?: string | null; type?: string }> {
  try {
    await p;
  } catch (error) {
    const e = error as { status?: number; code?: string | null; param?: string | null; type?: string };
    return { error, status: e.status, code: e.code, param: e.param, type: e.type };
  }
  throw new Error('the call succeeded');
}

describe.each(backends)('the official openai SDK against a live server on $name', { timeout: 180_000 }, (backend) => {
  let s: LiveServer;
  let receiver: Receiver;
  beforeAll(async () => {
    s = await startLive(backend, { allowPrivateUrls: true });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await s?.t.close();
    await receiver?.close();
  });

  it('images.generate answers n: 2 as two URLs of PNGs on this server, by alias, as two native jobs charged as native ones', async () => {
    const before = await native(s, '/workspace');
    const r = await sdk(s).images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse at dusk', n: 2, size: '1536x1024' });
    expect(r.data).toHaveLength(2);
    expect(r.output_format).toBe('png');
    for (const image of r.data!) {
      expect(image.url!.startsWith(`${s.url}/outputs/`)).toBe(true);
      expect(isPng(await pngOf(image.url!))).toBe(true);
    }
    const page = (await native(s, `/jobs?types=${encodeURIComponent(A2)}`)) as { items: { status: string; result: { urls: string[] } }[] };
    const urls = page.items.flatMap((j) => j.result.urls);
    expect(page.items.every((j) => j.status === 'completed')).toBe(true);
    for (const image of r.data!) expect(urls).toContain(image.url);
    const after = await native(s, '/workspace');
    // model-a-2 medium text-to-image is $0.03 a job (spec 8): two jobs, charged as natively.
    expect(Number(before.balance_usd) - Number(after.balance_usd)).toBeCloseTo(0.06, 6);
  });

  it('images.generate maps three sizes onto two schemas: width/height exactly, else the nearest aspect ratio (b64_json read back)', async () => {
    const client = sdk(s);
    for (const [size, ratio] of [['1024x1024', 1], ['1536x1024', 1.5], ['1024x1536', 2 / 3]] as const) {
      const b1 = await client.images.generate({ model: B1, prompt: 'a fox', size, response_format: 'b64_json' });
      const png = Buffer.from(b1.data![0]!.b64_json!, 'base64');
      expect(isPng(png)).toBe(true);
      expect(`${readPngSize(png).width}x${readPngSize(png).height}`).toBe(size);
      expect(b1.size).toBe(size);
      const a2 = await client.images.generate({ model: A2, prompt: 'a fox', size, response_format: 'b64_json' });
      const dims = readPngSize(Buffer.from(a2.data![0]!.b64_json!, 'base64'));
      expect(dims.width / dims.height).toBeCloseTo(ratio, 2);
    }
  });

  it('images.edit uploads the file as an asset of the workspace and runs the model on it', async () => {
    const input = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a6' } }).png().toBuffer();
    const before = ((await native(s, '/assets')) as { items: unknown[] }).items.length;
    const r = await sdk(s).images.edit({ model: A2, image: await toFile(input, 'in.png', { type: 'image/png' }), prompt: 'make it blue', response_format: 'url' });
    expect(r.data).toHaveLength(1);
    expect(isPng(await pngOf(r.data![0]!.url!))).toBe(true);
    const assets = (await native(s, '/assets')) as { items: { image_url: string; metadata: { kind: string } }[] };
    expect(assets.items.length).toBe(before + 1);
    expect(assets.items[0]!.metadata.kind).toBe('image');
  });

  it('models.list lists the catalog and the aliases, not retired models; a retired id is NotFoundError model_not_found', async () => {
    const ids = [];
    for await (const m of sdk(s).models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining([A2, B1, 'gpt-image-1', 'wide-image']));
    expect(ids).not.toContain('image/vendor-g/model-g-3');
    expect((await sdk(s).models.retrieve('gpt-image-1')).owned_by).toBe('vendor-a');
    const gone = await refusal(sdk(s).models.retrieve('image/vendor-g/model-g-3'));
    expect(gone.error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.code).toBe('model_not_found');
  });

  // A failed job's 5xx, and the other outcomes of the wait, are openai-images-outcomes.test.ts's.
  it('each refusal reaches the SDK as its typed error: 401, 400 with param, 404 model', async () => {
    const bad = await refusal(sdk(s, 'mg_not_a_token').images.generate({ prompt: 'x' }));
    expect(bad.error).toBeInstanceOf(OpenAI.AuthenticationError);
    const size = await refusal(sdk(s).images.generate({ model: A2, prompt: 'x', size: 'huge' }));
    expect(size.error).toBeInstanceOf(OpenAI.BadRequestError);
    expect([size.param, size.type]).toEqual(['size', 'invalid_request_error']);
    const format = await refusal(sdk(s).images.generate({ model: A2, prompt: 'x', output_format: 'webp' }));
    expect(format.param).toBe('output_format');
    const input = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } }).png().toBuffer();
    const mask = await refusal(sdk(s).images.edit({ model: A2, prompt: 'x', image: await toFile(input, 'a.png'), mask: await toFile(input, 'm.png') }));
    expect(mask.error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(mask.param).toBe('mask');
    const unknown = await refusal(sdk(s).images.generate({ model: 'dall-e-9', prompt: 'x' }));
    expect(unknown.error).toBeInstanceOf(OpenAI.NotFoundError);
    expect([unknown.code, unknown.param]).toEqual(['model_not_found', 'model']);
  });

  it('Idempotency-Key replays the same jobs, and X-Webhook-URL gives each native job its delivery', async () => {
    const headers = { 'Idempotency-Key': `k-${backend.name}`, 'X-Webhook-URL': `${receiver.url}/hook` };
    const first = await sdk(s).images.generate({ model: B1, prompt: 'a cat', n: 2, size: '512x512' }, { headers });
    const again = await sdk(s).images.generate({ model: B1, prompt: 'a cat', n: 2, size: '512x512' }, { headers });
    expect(again.data!.map((d) => d.url)).toEqual(first.data!.map((d) => d.url));
    const page = (await native(s, `/jobs?types=${encodeURIComponent(B1)}&limit=1000`)) as { items: { job_id: string; result?: { urls: string[] } }[] };
    const ours = page.items.filter((j) => first.data!.some((d) => (j.result?.urls ?? []).includes(d.url!)));
    expect(ours).toHaveLength(2);
    for (const job of ours) {
      // The delivery is the native one: queued when the job ended, for the webhook sender to send.
      const deliveries = (await native(s, `/jobs/${job.job_id}/webhook-deliveries`)) as { items: { url: string; event: string }[] };
      expect(deliveries.items).toEqual([expect.objectContaining({ url: `${receiver.url}/hook`, event: 'completed' })]);
    }
  });
});

describe('the SDK meets the limits of the native create', { timeout: 120_000 }, () => {
  it('a full workspace is RateLimitError rate_limit_exceeded, and the jobs this request made are cancelled', async () => {
    // No worker: the first job stays queued, holding the workspace's one slot.
    const s = await startLive(backends[0]!, { limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 }, worker: false });
    try {
      const r = await refusal(sdk(s).images.generate({ model: B1, prompt: 'x', n: 3 }));
      expect(r.error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(r.code).toBe('rate_limit_exceeded');
      const page = (await native(s, '/jobs')) as { items: { status: string }[] };
      expect(page.items.map((j) => j.status)).toEqual(['cancelled']);
    } finally {
      await s.t.close();
    }
  });

  it('a balance below the price is RateLimitError insufficient_quota, and nothing is charged', async () => {
    const s = await startLive(backends[0]!, { balanceMicros: 1_000, worker: false });
    try {
      const r = await refusal(sdk(s).images.generate({ model: A2, prompt: 'x' }));
      expect(r.error).toBeInstanceOf(OpenAI.RateLimitError);
      expect([r.code, r.type]).toEqual(['insufficient_quota', 'insufficient_quota']);
      expect((await native(s, '/workspace')).balance_usd).toBe('0.001000');
    } finally {
      await s.t.close();
    }
  });

  it("a token's own limits reach the SDK as its typed errors, declared in the document: a model outside its patterns, its spend limit; nothing is created", async () => {
    const s = await startLive(backends[0]!, { worker: false });
    try {
      const tokenWith = async (limits: Record<string, unknown>) => {
        const res = await fetch(`${s.url}/tokens`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.t.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'app', ...limits }),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { secret: string }).secret;
      };
      const videosOnly = await tokenWith({ models: ['video/*'] });
      const denied = await refusal(sdk(s, videosOnly).images.generate({ model: A2, prompt: 'x' }));
      expect(denied.error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect([denied.code, denied.type]).toEqual(['model_not_allowed', 'invalid_request_error']);
      // model-a-2 medium costs $0.03.
      const budget = await tokenWith({ spend_limit_usd: '0.01' });
      const spent = await refusal(sdk(s, budget).images.generate({ model: A2, prompt: 'x' }));
      expect(spent.error).toBeInstanceOf(OpenAI.RateLimitError);
      expect([spent.code, spent.type]).toEqual(['token_budget_exceeded', 'insufficient_quota']);
      // Each create's answer as its route declares it; a spent budget tells the SDK not to retry.
      const post = (url: string, token: string, body: unknown) =>
        checkedInject(s.t.app, { method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      for (const [url, body] of [
        ['/v1/images/generations', { model: A2, prompt: 'x' }],
        ['/v1/videos', { prompt: 'a paper boat' }],
      ] as const) {
        const over = await post(url, budget, body);
        expect([over.statusCode, over.headers['x-should-retry']], url).toEqual([429, 'false']);
        expect(over.json<{ error: { code: string } }>().error.code).toBe('token_budget_exceeded');
      }
      const imagesOnly = await tokenWith({ models: ['image/*'] });
      const video = await post('/v1/videos', imagesOnly, { prompt: 'a paper boat' });
      expect(video.statusCode, video.body).toBe(403);
      expect(video.json<{ error: { code: string } }>().error.code).toBe('model_not_allowed');
      expect((await native(s, '/jobs')).items).toEqual([]);
    } finally {
      await s.t.close();
    }
  });
});
