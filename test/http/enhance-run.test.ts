import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, get, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { assetFiles, uploadAsset } from '../helpers/asset-files.js';
import type { AssetFile } from '../helpers/asset-files.js';

/**
 * standard-enhance through the whole server: an uploaded asset as image_url, the worker and the
 * local engine, the output served back over HTTP; and a video asset given as the image failing
 * the job as input_invalid.
 */
const PUBLIC = 'http://127.0.0.1:8080';
const STANDARD = 'enhance/vendor-j/standard-enhance';

type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: { code: string; message: string } };

let t: TestApp;
let files: AssetFile[];
let fixtures: string;

beforeAll(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'mediagen-enhance-run-'));
  files = await assetFiles(fixtures);
  // The real clock: the enhancer plans the network against the job's deadline in real time.
  t = await createTestApp({ publicUrl: PUBLIC, realClock: true, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2, allowPrivateUrls: false } });
}, 60_000);

afterAll(async () => {
  await t.close();
  rmSync(fixtures, { recursive: true, force: true });
});

async function upload(mime: string): Promise<string> {
  const f = files.find((x) => x.mime === mime)!;
  const res = await uploadAsset(t.app, t.token, { bytes: f.bytes, filename: f.name });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ image_url: string }>().image_url;
}

async function finished(body: object): Promise<Job> {
  const res = await generate(t, STANDARD, body);
  expect(res.statusCode, res.body).toBe(200);
  return jobWhenEnded<Job>(t, res.json<Job>().job_id);
}

describe('standard-enhance through the server', { timeout: 120_000 }, () => {
  it('enhances an uploaded asset to a webp of exactly width x height, served as image/webp', async () => {
    const job = await finished({ image_url: await upload('image/png'), width: 400, height: 300, model: 'Low Resolution V2', output_format: 'webp' });
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result!.urls).toHaveLength(1);
    const out = await t.app.inject({ method: 'GET', url: new URL(job.result!.urls[0]!).pathname });
    expect(out.statusCode).toBe(200);
    expect(out.headers['content-type']).toBe('image/webp');
    const meta = await sharp(out.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 400, 300]);
  });

  it('fails the job with input_invalid when image_url is an uploaded video', async () => {
    const job = await finished({ image_url: await upload('video/mp4'), width: 400, height: 300, model: 'Standard V2' });
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(/^image_url /) });
  });
});

describe("a job's details say which upscaler ran", { timeout: 120_000 }, () => {
  const upstreamOf = async (id: string) => (await get(t, `/jobs/${id}/details`)).json<{ upstream: unknown }>().upstream;

  it('the network and its scale for an enlargement: esrgan-slim x2', async () => {
    const png = files.find((x) => x.mime === 'image/png')!;
    const meta = await sharp(png.bytes).metadata();
    const job = await finished({ image_url: await upload('image/png'), width: meta.width! * 2, height: meta.height! * 2, model: 'Standard V2', output_format: 'png' });
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(await upstreamOf(job.job_id)).toEqual({ engine: 'local', id: 'esrgan-slim x2', status: 'esrgan-slim x2', usage: { upscaler: 'esrgan-slim', scale: 2 } });
  });

  it('lanczos3 and why when the picture is not enlarged', async () => {
    const job = await finished({ image_url: await upload('image/png'), width: 16, height: 16, model: 'Standard V2' });
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(await upstreamOf(job.job_id)).toEqual({ engine: 'local', id: 'lanczos3', status: 'lanczos3', usage: { upscaler: 'lanczos3', reason: 'the picture is not enlarged' } });
  });
});
