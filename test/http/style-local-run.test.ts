import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { PUBLIC_URL, createJob, createTestApp, errorOf, generate, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { backends } from '../helpers/backends.js';
import { rgb } from '../engines/engine-harness.js';
import { paletteDistance, warmImages } from '../engines/style-fixtures.js';

/**
 * Issue 15 points 2, 3 and 9 end to end on the real local engine: a style trained through the API
 * from images made here changes what model-a-2 renders, measurably, as its strength says.
 */

type Job = { job_id: string; status: string; result?: { urls: string[]; style_id?: string }; error?: unknown };

/** The colours the warm training images are drawn with (style-fixtures.ts). */
const WARM = [[38, 4, 0], [255, 122, 16], [255, 198, 64]].map((c) => ({ rgb: c, weight: 1 / 3 }));

describe.each(backends)('a trained style on the local engine ($name)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2 } });
  });
  afterAll(() => t.close());

  const fetched = async (url: string): Promise<Buffer> => {
    const res = await t.app.inject({ method: 'GET', url: url.replace(PUBLIC_URL, '') });
    expect(res.statusCode).toBe(200);
    return res.rawPayload;
  };

  async function render(styles?: Array<{ id: string; strength: number }>): Promise<Buffer> {
    const body = { prompt: 'a lighthouse on a cliff', aspect_ratio: '1:1', resolution: '1K', seed: 7, ...(styles ? { styles } : {}) };
    const res = await generate(t, 'image/vendor-a/model-a-2/medium', body);
    expect(res.statusCode, res.body).toBe(200);
    const job = await jobWhenEnded<Job>(t, res.json<Job>().job_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    return fetched(job.result!.urls[0]!);
  }

  it('trains from uploaded images, then renders toward the style with strength, exactly unchanged at 0', async () => {
    const urls: string[] = [];
    for (const [i, bytes] of (await warmImages()).entries()) {
      urls.push((await uploadAsset(t.app, t.token, { bytes, filename: `warm-${i}.png` })).json<{ image_url: string }>().image_url);
    }
    const res = await createJob(t, 'loraTraining', { name: 'Ember', urls, max_train_steps: 200 });
    expect(res.statusCode, res.body).toBe(200);
    const trained = await jobWhenEnded<Job>(t, res.json<Job>().job_id);
    expect(trained.status, JSON.stringify(trained.error)).toBe('completed');
    const cover = await fetched(trained.result!.urls[0]!);
    expect(cover.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([cover.readUInt32BE(16), cover.readUInt32BE(20)]).toEqual([1024, 1024]);
    const id = trained.result!.style_id!;

    const plain = await render();
    expect((await render([{ id, strength: 0 }])).equals(plain)).toBe(true);
    const distance = async (png: Buffer) => paletteDistance(await rgb(png), WARM);
    const [none, half, full, away] = [await distance(plain), await distance(await render([{ id, strength: 1 }])), await distance(await render([{ id, strength: 2 }])), await distance(await render([{ id, strength: -1 }]))];
    expect(half).toBeLessThan(none);
    expect(full).toBeLessThan(half);
    expect(away).toBeGreaterThan(none);
  });

  it('refuses at creation a style id another workspace trained', async () => {
    const res = await createJob(t, 'loraTraining', { name: 'Mine', urls: [(await uploadAsset(t.app, t.token, { bytes: (await warmImages())[0]!, filename: 'w.png' })).json<{ image_url: string }>().image_url] });
    const trained = await jobWhenEnded<Job>(t, res.json<Job>().job_id);
    const other = await t.newWorkspace('style-outsider');
    const body = { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', styles: [{ id: trained.result!.style_id!, strength: 1 }] };
    expect(errorOf(await generate(t, 'image/vendor-a/model-a-2/medium', body, {}, other.token), 400)).toMatch(/^styles\[0\]\.id names a style that does not exist/);
  });
});
