import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { backends } from '../helpers/backends.js';
import { createTestApp, del, errorOf, generate, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { assetFiles, uploadAsset } from '../helpers/asset-files.js';
import type { AssetFile } from '../helpers/asset-files.js';

/**
 * Assets as inputs, with the server on its default configuration: loopback URLs refused at the
 * door and by the worker's guard. The public URL is a loopback address, as `npm start` has it, so
 * an asset URL would be refused if it were treated as any URL: it must be read from the store.
 */
const PUBLIC = 'http://127.0.0.1:8080';
const IMAGE = 'image/vendor-a/model-a-2/medium';
const EDIT = 'video/vendor-c/model-c-edit';

type Job = { job_id: string; status: string; error?: { code: string; message: string } };

let files: AssetFile[];
let fixtures: string;

beforeAll(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'mediagen-asset-inputs-'));
  files = await assetFiles(fixtures);
}, 60_000);

afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

async function upload(t: TestApp, mime: string, token = t.token): Promise<{ id: string; image_url: string }> {
  const f = files.find((x) => x.mime === mime)!;
  const res = await uploadAsset(t.app, token, { bytes: f.bytes, filename: f.name });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const finished = (t: TestApp, id: string) => jobWhenEnded<Job>(t, id);

describe.each(backends)('assets as inputs on $name', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      backend,
      publicUrl: PUBLIC,
      worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2, allowPrivateUrls: false },
    });
  });
  afterAll(() => t.close());

  it('refuses a plain loopback URL at the door (the default configuration)', async () => {
    expect(errorOf(await generate(t, IMAGE, { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_url: `${PUBLIC}/red.png` }), 400)).toMatch(/loopback/);
  });

  it('reads an asset given as image_url and as a style reference from the store, and the job completes', async () => {
    const png = await upload(t, 'image/png');
    const jpeg = await upload(t, 'image/jpeg');
    expect(png.image_url.startsWith(`${PUBLIC}/assets/files/`)).toBe(true);
    expect(png.image_url.length).toBeLessThanOrEqual(1024);
    const res = await generate(t, IMAGE, {
      prompt: 'a product shot',
      aspect_ratio: '1:1',
      resolution: '1K',
      image_url: png.image_url,
      image_style_references: [{ url: jpeg.image_url, strength: 0.5 }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const job = await finished(t, res.json<Job>().job_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
  });

  it('reads an asset given as init_video, and a job made before the asset was deleted still completes', async () => {
    const mp4 = await upload(t, 'video/mp4');
    const image = await upload(t, 'image/png');
    const res = await generate(t, EDIT, { prompt: 'make it blue', init_video: mp4.image_url, init_image_url: image.image_url });
    expect(res.statusCode, res.body).toBe(200);
    // Deleted while the job may still be waiting: the job keeps its input.
    expect((await del(t, `/assets/${mp4.id}`)).statusCode).toBe(200);
    const job = await finished(t, res.json<Job>().job_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
  });

  it("refuses at creation, with 400, a deleted asset's URL and another workspace's", async () => {
    const gone = await upload(t, 'image/png');
    await del(t, `/assets/${gone.id}`);
    expect(errorOf(await generate(t, IMAGE, { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_url: gone.image_url }), 400)).toMatch(/^image_url names an asset that/);
    const other = await t.newWorkspace(`inputs-${backend.name}`);
    const theirs = await upload(t, 'image/png', other.token);
    const res = await generate(t, IMAGE, { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_style_references: [{ url: theirs.image_url }] });
    expect(errorOf(res, 400)).toBe(
      'image_style_references[0].url names an asset that does not exist in this workspace; upload the file with POST /assets and use the image_url it returns',
    );
  });
});
