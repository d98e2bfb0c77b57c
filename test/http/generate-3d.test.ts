import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { LAVFI_VIDEO, ffmpegFile } from '../engines/asset-fixtures.js';
import { TempDirs } from '../engines/engine-harness.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { readGlb, validateGlb } from '../helpers/gltf.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { DATA_URI, K1, MINIMAL, accept, bad, invalid, ok, openGen, runCase, valid } from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** POST /generate/3d/vendor-k/model-k-1: its body, and its jobs through the server, a worker and the local engine. */

const K1_CASES: FieldCase[] = [
  // image_url: required media URL
  ok('image_url as a data URI', { image_url: DATA_URI }),
  bad('image_url missing', { image_url: undefined }, 'image_url'),
  bad('image_url that is not a URL', { image_url: 'object.png' }, 'image_url'),
  bad('image_url with a file: scheme', { image_url: 'file:///etc/passwd' }, 'image_url'),
  bad('image_url null', { image_url: null }, 'image_url'),
  // prompt: optional, at most 1024 characters
  ok('prompt of 1024 characters', { prompt: 'p'.repeat(1024) }),
  bad('prompt of 1025 characters', { prompt: 'p'.repeat(1025) }, 'prompt'),
  bad('prompt as a number', { prompt: 3 }, 'prompt'),
  // seed: integer 0..4294967295
  ok('seed 0', { seed: 0 }),
  ok('seed 4294967295', { seed: 4294967295 }),
  bad('seed -1', { seed: -1 }, 'seed'),
  bad('seed 4294967296', { seed: 4294967296 }, 'seed'),
  bad('seed 1.5', { seed: 1.5 }, 'seed'),
  // texture: boolean
  ok('texture false', { texture: false }),
  ok('texture true', { texture: true }),
  bad('texture as the string "true"', { texture: 'true' }, 'texture'),
  bad('texture null', { texture: null }, 'texture'),
  // face_limit: integer 500..200000
  ok('face_limit 500', { face_limit: 500 }),
  ok('face_limit 200000', { face_limit: 200_000 }),
  bad('face_limit 499', { face_limit: 499 }, 'face_limit'),
  bad('face_limit 200001', { face_limit: 200_001 }, 'face_limit'),
  bad('face_limit 1000.5', { face_limit: 1000.5 }, 'face_limit'),
  bad('face_limit as the string "5000"', { face_limit: '5000' }, 'face_limit'),
  // unknown fields are refused, the vendor's other names included
  bad('an unknown field', { quality: 'high' }, 'quality'),
  bad('image (the name some vendors use)', { image: DATA_URI }, 'image'),
];

describe('POST /generate/3d/vendor-k/model-k-1 request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(K1_CASES))('accepts $name', (c) => runCase(g, K1, c));
  it.each(invalid(K1_CASES))('refuses $name with 400 naming $field', (c) => runCase(g, K1, c));

  it('stores the defaults with a minimal body: texture true, face_limit 20000', async () => {
    const { stored } = await accept(g, K1, MINIMAL[K1]);
    // A request without a seed gets a random one, recorded with the job (docs/engine.md).
    expect(stored.request).toEqual({ ...MINIMAL[K1], texture: true, face_limit: 20_000, seed: expect.any(Number) });
  });

  it('refuses a loopback image_url at the door', async () => {
    const res = await generate(g.t, K1, { image_url: 'http://127.0.0.1/object.png' });
    expect(res.statusCode).toBe(400);
  });
});

type UrlItem = { type: string; url: string };
type Job = { job_id: string; status: string; result?: { urls: UrlItem[] }; error?: { code: string; message: string } };

describe('model-k-1 jobs through the server', { timeout: 120_000 }, () => {
  let t: TestApp;
  const dirs = new TempDirs();
  let png: Buffer;
  beforeAll(async () => {
    t = await createTestApp({ worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2, allowPrivateUrls: false } });
    png = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#3060c0' } })
      .composite([{ input: await sharp({ create: { width: 40, height: 30, channels: 3, background: '#ffffff' } }).png().toBuffer(), left: 40, top: 30 }])
      .png()
      .toBuffer();
  });
  afterAll(async () => {
    await t.close();
    await dirs.cleanup();
  });

  const finished = async (body: object): Promise<Job> => {
    const res = await generate(t, K1, body);
    expect(res.statusCode, res.body).toBe(200);
    const { job_id } = res.json() as Job;
    return waitFor(async () => {
      const j = (await get(t, `/jobs/${job_id}`)).json() as Job;
      return j.status === 'completed' || j.status === 'failed' ? j : undefined;
    }, `job ${job_id} to end`, 60_000);
  };
  const fetchOutput = (url: string) => t.app.inject({ method: 'GET', url: new URL(url).pathname });
  const charge = async (jobId: string) =>
    (await t.store.billing.listEntries(t.workspaceId)).find((e) => e.jobId === jobId && e.kind === 'charge')!.amountMicros;

  it('completes with result.urls [{type: model}, {type: preview}]: a valid GLB served as model/gltf-binary and a 512 x 512 PNG', async () => {
    const job = await finished({ image_url: `data:image/png;base64,${png.toString('base64')}`, face_limit: 3_000 });
    expect(job.error).toBeUndefined();
    expect(job.result!.urls).toEqual([
      { type: 'model', url: expect.stringMatching(/^http:\/\/mediagen\.test\/outputs\/.+\/model\.glb$/) },
      { type: 'preview', url: expect.stringMatching(/^http:\/\/mediagen\.test\/outputs\/.+\/preview\.png$/) },
    ]);
    const model = await fetchOutput(job.result!.urls[0]!.url);
    expect(model.statusCode).toBe(200);
    expect(model.headers['content-type']).toBe('model/gltf-binary');
    const report = await validateGlb(model.rawPayload);
    expect(report.issues.numErrors).toBe(0);
    expect(report.issues.numWarnings).toBe(0);
    const glb = readGlb(model.rawPayload);
    expect(glb.json.accessors[glb.json.meshes[0]!.primitives[0]!.indices]!.count / 3).toBeLessThanOrEqual(3_000);
    expect(glb.json.images).toHaveLength(1);
    const preview = await fetchOutput(job.result!.urls[1]!.url);
    expect(preview.headers['content-type']).toBe('image/png');
    expect(isPng(preview.rawPayload)).toBe(true);
    expect(readPngSize(preview.rawPayload)).toEqual({ width: 512, height: 512 });
    expect(await charge(job.job_id)).toBe(300_000);
  });

  it('reads an uploaded asset as image_url; without texture the model has no image and costs the untextured rate', async () => {
    const asset = await uploadAsset(t.app, t.token, { bytes: png, filename: 'object.png' });
    expect(asset.statusCode, asset.body).toBe(200);
    const job = await finished({ image_url: (asset.json() as { image_url: string }).image_url, texture: false });
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const glb = readGlb((await fetchOutput(job.result!.urls[0]!.url)).rawPayload);
    expect(glb.json.images).toBeUndefined();
    expect(await charge(job.job_id)).toBe(200_000);
  });

  it('fails with input_invalid when image_url is a video asset', async () => {
    const mp4 = await readFile(await ffmpegFile(await dirs.make(), 'v.mp4', ['-y', ...LAVFI_VIDEO(1), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']));
    const asset = await uploadAsset(t.app, t.token, { bytes: mp4, filename: 'clip.mp4' });
    expect(asset.statusCode, asset.body).toBe(200);
    const job = await finished({ image_url: (asset.json() as { image_url: string }).image_url });
    expect(job.status).toBe('failed');
    expect(job.error).toEqual({ code: 'input_invalid', message: expect.stringMatching(/^image_url is .*, not a raster image/) });
    expect(job).not.toHaveProperty('result');
  });
});

describe('model-k-1 in the OpenAPI document and GET /models', () => {
  let t: TestApp;
  type Schema = Record<string, unknown> & { $ref?: string; items?: Schema; properties?: Record<string, Schema>; required?: string[] };
  let doc: { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Schema> } };
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => t.close());

  it('declares the result shape of the 3D operation: x-result-urls names ModelFileUrls, [{type: model | preview, url}], and the description says it', () => {
    const op = doc.paths[`/generate/${K1}`]!.post!;
    expect(op.tags).toEqual(['3d generation']);
    expect(op['x-result-urls']).toEqual({ $ref: '#/components/schemas/ModelFileUrls' });
    expect(op.description).toContain('`[{"type": "model", "url": …}, {"type": "preview", "url": …}]`');
    const urls = doc.components.schemas.ModelFileUrls!;
    expect(urls.type).toBe('array');
    expect(urls.items!.properties!.type).toMatchObject({ enum: ['model', 'preview'] });
    expect(urls.items!.required!.sort()).toEqual(['type', 'url']);
    // The same component is one of the shapes a job's result.urls may take (GET /jobs/{id}).
    expect(JSON.stringify(doc.components.schemas.JobResult)).toContain('#/components/schemas/ModelFileUrls');
    // Other models say nothing of it.
    expect(doc.paths['/generate/video/vendor-f/model-f']!.post!['x-result-urls']).toBeUndefined();
  });

  it('documents the body as ModelK1Request with its bounds and defaults', () => {
    const body = doc.components.schemas.ModelK1Request!;
    expect(body.required).toEqual(['image_url']);
    expect(body.properties!.face_limit).toMatchObject({ type: 'integer', minimum: 500, maximum: 200_000, default: 20_000 });
    expect(body.properties!.texture).toMatchObject({ type: 'boolean', default: true });
  });

  it('lists the model in GET /models as kind 3d with its price rule', async () => {
    const m = (await t.app.inject({ method: 'GET', url: `/models/${K1}` })).json() as { kind: string; price: { rates_micro_usd: Record<string, number> } };
    expect(m.kind).toBe('3d');
    expect(m.price.rates_micro_usd).toEqual({ textured: 300_000, untextured: 200_000 });
  });
});
