import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { FakeComfyui } from './fakes/fake-comfyui.js';
import { FIXTURES } from './command-fixtures.js';

/**
 * Fallback from engines of one's own (docs/routing.md, "Fallback"): ComfyUI and a command engine
 * first, fal after them, and the money rule at a provider's door: a submission that may have been
 * taken (a 500) never goes to the next engine. A real app and worker on a real store; ComfyUI and
 * fal are fakes written from their public source and documentation (fakes/fake-comfyui.ts,
 * ../providers/fakes/fake-fal.ts); the command is a real Python process.
 */

const MODEL = 'image/acme/own-first-v1';
const CUSTOM = {
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.02' },
  output: { content_types: ['image/png'] },
  engine: 'provider:fal',
  upstream: {
    workflow: {
      '5': { class_type: 'EmptyLatentImage', inputs: { width: 64, height: 64, batch_size: 1 } },
      '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a photo', clip: ['4', 1] } },
      '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'out' } },
    },
    inputs: { prompt: { node: '6', input: 'text' } },
    output_nodes: ['9'],
    model: 'fal-ai/fast-sdxl',
    input: { prompt: '{{prompt}}' },
  },
};
const KEY = 'fal-key-id:0123456789abcdef0123';

interface Route {
  engine: string | null;
  tried: { engine: string; outcome: string; reason?: string }[];
}

describe.each(backends)('fallback from engines of our own: $name', { timeout: 60_000 }, (backend) => {
  let fal: FakeFal;
  let comfy: FakeComfyui | undefined;
  let t: TestApp | undefined;
  beforeAll(async () => {
    fal = await startFakeFal();
  });
  afterAll(async () => {
    await fal.close();
  });
  afterEach(async () => {
    await t?.close();
    await comfy?.close();
    t = comfy = undefined;
    clearFalJwksCache();
  });

  const falSettings = (url = fal.url) => ({ type: 'fal', base_url: url, api_key_env: 'FAL_KEY', storage_url: fal.storageUrl, poll_interval_ms: 20 });
  async function app(chain: string[], extra: { comfyUrl?: string; providers?: Json } = {}) {
    return createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [CUSTOM],
      routing: { model_engines: { [MODEL]: chain } },
      ...(extra.comfyUrl ? { comfyui: { raw: { gpu: { base_url: extra.comfyUrl, poll_interval_ms: 20, request_timeout_ms: 2000 } }, dir: FIXTURES } } : {}),
      commands: { raw: { broken: { argv: ['python3', 'command-missing-module.py'] } }, dir: FIXTURES },
      providers: { providers: extra.providers ?? { fal: falSettings() }, env: { FAL_KEY: KEY } },
      worker: { pollMs: 50, log: silentLog, allowPrivateUrls: true },
    });
  }
  const run = async (a: TestApp) => {
    const res = await generate(a, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    return { id, job: await jobEnd(a, id, 30_000) };
  };
  const charges = async (a: TestApp, id: string) => (await a.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge').length;
  const tried = async (a: TestApp, id: string) => ((await a.services.routes.of(id)) as Route | undefined)?.tried.map((s) => [s.engine, s.outcome]);

  it('ComfyUI on a closed port: the job completes on fal at once, charged once, submitted once', async () => {
    t = await app(['comfyui:gpu', 'provider:fal'], { comfyUrl: `http://127.0.0.1:${await freePort()}` });
    const before = fal.submissions();
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(fal.submissions() - before).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect(await tried(t, id)).toEqual([
      ['comfyui:gpu', 'refused'],
      ['provider:fal', 'ran'],
    ]);
  });

  it('ComfyUI answering 503 to POST /prompt: fal takes the job, and ComfyUI queued nothing', async () => {
    comfy = await new FakeComfyui().start();
    comfy.down = (method, path) => method === 'POST' && path === '/prompt';
    t = await app(['comfyui:gpu', 'provider:fal'], { comfyUrl: comfy.baseUrl });
    const before = fal.submissions();
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(comfy.pending.length + comfy.history.size).toBe(0);
    expect(comfy.requests.filter((r) => r === 'POST /prompt')).toHaveLength(1);
    expect(fal.submissions() - before).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect(await tried(t, id)).toEqual([
      ['comfyui:gpu', 'refused'],
      ['provider:fal', 'ran'],
    ]);
  });

  it('a prompt ComfyUI took and failed is not sent to fal, and not charged', async () => {
    comfy = await new FakeComfyui({ executionError: { node_id: '9', node_type: 'SaveImage', exception_message: 'out of memory', exception_type: 'torch.OutOfMemoryError' } }).start();
    t = await app(['comfyui:gpu', 'provider:fal'], { comfyUrl: comfy.baseUrl });
    const before = fal.submissions();
    const { id, job } = await run(t);
    expect(job.status).toBe('failed');
    expect(comfy.prompts).toHaveLength(1);
    expect(fal.submissions() - before).toBe(0);
    expect(await charges(t, id)).toBe(0);
    expect(await tried(t, id)).toEqual([['comfyui:gpu', 'ran']]);
  });

  it('a command whose processes cannot start: fal takes the job after the first failed start, not at the deadline', async () => {
    t = await app(['command:broken', 'provider:fal']);
    const before = fal.submissions();
    const { id, job } = await run(t);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(fal.submissions() - before).toBe(1);
    expect(await charges(t, id)).toBe(1);
    expect(await tried(t, id)).toEqual([
      ['command:broken', 'refused'],
      ['provider:fal', 'ran'],
    ]);
  });

  it('a provider that answers 500 to a submission may have taken it: the job fails there, the next engine gets nothing, nothing is charged', async () => {
    const second = await startFakeFal();
    try {
      t = await app(['provider:fal', 'provider:second'], { providers: { fal: falSettings(), second: { ...falSettings(second.url), storage_url: second.storageUrl } } });
      fal.failNext(1, { status: 500, detail: 'internal error' });
      const { id, job } = await run(t);
      expect(job.status).toBe('failed');
      expect((job.error as { code: string }).code).toBe('upstream_unavailable');
      expect(second.submissions()).toBe(0);
      expect(await charges(t, id)).toBe(0);
      expect(await tried(t, id)).toEqual([['provider:fal', 'ran']]);
    } finally {
      await second.close();
    }
  });
});
