import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { OutputJanitor } from '../../src/services/upkeep/output-janitor.js';
import { backends } from '../helpers/backends.js';
import { createTestApp, del, generate, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { assetFiles, uploadAsset } from '../helpers/asset-files.js';
import type { AssetFile } from '../helpers/asset-files.js';

let png: AssetFile;
let fixtures: string;

beforeAll(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'mediagen-asset-kept-'));
  png = (await assetFiles(fixtures)).find((f) => f.mime === 'image/png')!;
}, 60_000);

afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

/**
 * A deleted asset's file: not served from the DELETE on, kept while a job created before the
 * deletion may still read it, and removed by the output janitor once no such job is left.
 */
describe.each(backends)("a deleted asset's file on $name", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(() => t.close());

  it('is kept for a queued job that names it, and swept once that job has ended', async () => {
    const asset = (await uploadAsset(t.app, t.token, { bytes: png.bytes, filename: 'a.png' })).json<{ id: string; image_url: string }>();
    const key = new URL(asset.image_url).pathname.split('/')[3]!;
    const file = join(t.outputs.dir(key), 'asset.png');
    // No worker runs: the job stays queued.
    const job = (await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_url: asset.image_url })).json<{ job_id: string }>();
    expect((await del(t, `/assets/${asset.id}`)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: new URL(asset.image_url).pathname })).statusCode).toBe(404);
    const janitor = new OutputJanitor(t.store.jobs, t.outputs, systemClock, silentLog, { intervalMs: 60_000, graceMs: 0 });
    await janitor.sweep();
    expect(existsSync(file)).toBe(true);
    expect(await t.services.assets.readInput(asset.image_url, 'image_url')).toEqual(png.bytes);
    // The job ends (a DELETE cancels it first): nothing needs the file any more.
    expect((await del(t, `/jobs/${job.job_id}`)).statusCode).toBe(200);
    await janitor.sweep();
    expect(existsSync(file)).toBe(false);
  });

  it('is removed at once when no job could read it', async () => {
    const asset = (await uploadAsset(t.app, t.token, { bytes: png.bytes, filename: 'a.png' })).json<{ id: string; image_url: string }>();
    const key = new URL(asset.image_url).pathname.split('/')[3]!;
    expect(existsSync(t.outputs.dir(key))).toBe(true);
    await del(t, `/assets/${asset.id}`);
    expect(existsSync(t.outputs.dir(key))).toBe(false);
  });
});
