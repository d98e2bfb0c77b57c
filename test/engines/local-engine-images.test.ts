import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { MODEL_A2_SIZES } from '../../src/engines/local/renderers/model-a2-renderer.js';
import { ManualClock } from '../../src/lib/clock.js';
import { isJpeg, isPng, readJpegSize, readPngSize } from '../helpers/media.js';
import {
  TempDirs,
  colourDistance,
  dataUri,
  fakeContext,
  meanAbsDiff,
  meanColour,
  rgb,
  runJob,
  solidPng,
} from './engine-harness.js';
import type { Pixels } from './engine-harness.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';

const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

function a2(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { prompt: 'a lighthouse in a storm', aspect_ratio: '1:1', resolution: '1K', seed: 42, ...extra };
}

/** A picture unlike any scene: left half black, right half white. */
function splitImage(): Promise<Buffer> {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="#000"/><rect x="400" width="400" height="600" fill="#fff"/></svg>';
  return sharp(Buffer.from(svg)).png().toBuffer();
}

describe('model-a-2', () => {
  it.each(Object.entries(MODEL_A2_SIZES))('renders %s as a PNG of exactly the tabled size', async (ratio, [w, h]) => {
    const { bytes, outputs, ctx } = await runJob(engine, dirs, A2, a2({ aspect_ratio: ratio }));
    expect(outputs).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(isPng(bytes)).toBe(true);
    expect(readPngSize(bytes)).toEqual({ width: w, height: h });
    expect(Math.abs(w / h - ratioValue(ratio))).toBeLessThan(0.005);
    expect(w * h).toBeGreaterThan(0.9e6);
    expect(w * h).toBeLessThan(1.3e6);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    expect(ctx.stages[2]).toMatchObject({ preview: { name: 'preview.jpg', contentType: 'image/jpeg' }, previewExisted: true });
  });

  it('serves all three model-a-2 paths', async () => {
    for (const tier of ['large', 'medium-turbo']) {
      const { bytes } = await runJob(engine, dirs, `image/vendor-a/model-a-2/${tier}`, a2());
      expect(readPngSize(bytes)).toEqual({ width: 1024, height: 1024 });
    }
  });

  it('gives identical bytes for an identical request, with or without a seed', async () => {
    const [one, two] = await Promise.all([runJob(engine, dirs, A2, a2()), runJob(engine, dirs, A2, a2())]);
    expect(one.bytes.equals(two.bytes)).toBe(true);
    const unseeded = a2({ seed: null });
    const [three, four] = [await runJob(engine, dirs, A2, unseeded), await runJob(engine, dirs, A2, unseeded)];
    expect(three.bytes.equals(four.bytes)).toBe(true);
    expect(three.bytes.equals(one.bytes)).toBe(false);
  });

  it('paints visibly different pictures for different prompts and different seeds', async () => {
    const fox = await rgb((await runJob(engine, dirs, A2, a2({ prompt: 'a red fox at dawn' }))).bytes);
    const sub = await rgb((await runJob(engine, dirs, A2, a2({ prompt: 'a submarine under arctic ice' }))).bytes);
    const fox2 = await rgb((await runJob(engine, dirs, A2, a2({ prompt: 'a red fox at dawn', seed: 43 }))).bytes);
    expect(meanAbsDiff(fox, sub)).toBeGreaterThan(25);
    expect(colourDistance(meanColour(fox), meanColour(sub))).toBeGreaterThan(15);
    expect(meanAbsDiff(fox, fox2)).toBeGreaterThan(15);
  });

  it('keeps the input image at strength 0 and replaces it at strength 1 (image-to-image)', async () => {
    const input = await splitImage();
    const url = dataUri(input);
    const plain = await runJob(engine, dirs, A2, a2({ aspect_ratio: '16:9' }));
    const replaced = await runJob(engine, dirs, A2, a2({ aspect_ratio: '16:9', image_url: url, strength: 1 }));
    const kept = await runJob(engine, dirs, A2, a2({ aspect_ratio: '16:9', image_url: url, strength: 0 }));
    const half = await runJob(engine, dirs, A2, a2({ aspect_ratio: '16:9', image_url: url, strength: 0.5 }));
    expect(replaced.ctx.loaded).toEqual(['image_url']);
    expect(replaced.bytes.equals(plain.bytes)).toBe(true);

    const size = { width: 1344, height: 756 };
    const inputCovered = await rgb(await sharp(input).resize(size.width, size.height, { fit: 'cover' }).png().toBuffer());
    const [keptPx, plainPx, halfPx] = await Promise.all([rgb(kept.bytes), rgb(plain.bytes), rgb(half.bytes)]);
    expect(meanAbsDiff(keptPx, inputCovered)).toBeLessThan(1);
    expect(meanAbsDiff(plainPx, inputCovered)).toBeGreaterThan(40);
    // Halfway is halfway: equally far (within rounding) from both ends.
    expect(Math.abs(meanAbsDiff(halfPx, inputCovered) - meanAbsDiff(halfPx, plainPx))).toBeLessThan(1);
  });

  it('steers the picture toward a style reference, more with more strength', async () => {
    const red = dataUri(await solidPng(64, 64, '#ff0000'));
    const base = meanColour(await rgb((await runJob(engine, dirs, A2, a2())).bytes));
    const weak = meanColour(
      await rgb((await runJob(engine, dirs, A2, a2({ image_style_references: [{ url: red, strength: 0.2 }] }))).bytes),
    );
    const strong = meanColour(
      await rgb((await runJob(engine, dirs, A2, a2({ image_style_references: [{ url: red, strength: 1 }] }))).bytes),
    );
    expect(weak[0] - base[0]).toBeGreaterThan(5);
    expect(strong[0] - base[0]).toBeGreaterThan(40);
    expect(colourDistance(strong, [255, 0, 0])).toBeLessThan(colourDistance(base, [255, 0, 0]) - 60);
  });

  it('visibly changes the picture for a moodboard at its default strength, and per moodboard id', async () => {
    const base = await rgb((await runJob(engine, dirs, A2, a2())).bytes);
    const moodA = await rgb(
      (await runJob(engine, dirs, A2, a2({ moodboards: [{ id: '6f1c2c1e-5d7e-4a8b-9a55-0c5d3f2b7e11', strength: 0.23 }] }))).bytes,
    );
    const moodB = await rgb(
      (await runJob(engine, dirs, A2, a2({ moodboards: [{ id: 'b0a4e0c2-94d3-4a57-8f0e-3c1f6d9e2a77', strength: 0.23 }] }))).bytes,
    );
    expect(meanAbsDiff(base, moodA)).toBeGreaterThan(12);
    expect(meanAbsDiff(moodA, moodB)).toBeGreaterThan(8);
  });

  // Styles: local-engine-styles.test.ts.
  it('changes the picture visibly for each slider', async () => {
    const base = await rgb((await runJob(engine, dirs, A2, a2())).bytes);
    const variants: Record<string, unknown>[] = [
      { intensity: 80 },
      { intensity: -80 },
      { complexity: 90 },
      { complexity: -90 },
      { movement: 70 },
      { creativity: 'high' },
    ];
    for (const extra of variants) {
      const px = await rgb((await runJob(engine, dirs, A2, a2(extra))).bytes);
      // At least 2% of the pixels moved by more than a tenth of the range: a change anyone can see.
      expect(changedFraction(base, px, 25), JSON.stringify(extra)).toBeGreaterThan(0.02);
    }
  });

  it('fails with input_invalid, naming the field, when an input is not an image', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ image_url: dataUri(Buffer.from('not an image'), 'text/plain') }, /^image_url is a text file, not a raster image; send a JPEG, PNG/],
      [{ image_url: dataUri((await splitImage()).subarray(0, 300)) }, /^image_url is not a usable image: it cannot be decoded/],
      [
        { image_style_references: [{ url: dataUri(await solidPng(8, 8, '#00f')) }, { url: 'data:image/png;base64,AAAA' }] },
        /^image_style_references\[1\]\.url is not an image file it accepts/,
      ],
      [
        { image_url: dataUri(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>'), 'image/svg+xml') },
        /^image_url is an SVG image, not a raster image/,
      ],
    ];
    for (const [extra, message] of cases) {
      const ctx = fakeContext(await dirs.make());
      const err = await engine.run({ id: 'j', model: A2, request: a2(extra) }, ctx).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(message) });
      // Inputs are checked before the job reports `processing`.
      expect(ctx.stages).toEqual([]);
    }
  });

  it('passes on the context’s own fetch failure unchanged', async () => {
    const ctx = fakeContext(await dirs.make());
    const run = engine.run({ id: 'j', model: A2, request: a2({ image_url: 'https://example.test/x.png' }) }, ctx);
    await expect(run).rejects.toMatchObject({ code: 'input_fetch_failed' });
  });
});

describe('model-b-1', () => {
  it('renders exactly width x height, rounding fractional sizes, as PNG by default', async () => {
    const { bytes, outputs } = await runJob(engine, dirs, B1, { prompt: 'a kite', width: 640.6, height: 512.4 });
    expect(outputs).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(readPngSize(bytes)).toEqual({ width: 641, height: 512 });
    const explicit = await runJob(engine, dirs, B1, { prompt: 'a kite', width: 700, height: 900, output_format: 'png' });
    expect(readPngSize(explicit.bytes)).toEqual({ width: 700, height: 900 });
  });

  it('writes a JPEG when output_format is jpeg', async () => {
    const { bytes, outputs } = await runJob(engine, dirs, B1, {
      prompt: 'a kite',
      width: 512,
      height: 777,
      output_format: 'jpeg',
    });
    expect(outputs).toEqual([{ name: 'output.jpg', contentType: 'image/jpeg' }]);
    expect(isJpeg(bytes)).toBe(true);
    expect(readJpegSize(bytes)).toEqual({ width: 512, height: 777 });
  });

  it('renders manga in monochrome, and mode and style images visibly change the picture', async () => {
    const req = { prompt: 'a samurai cat', width: 768, height: 768, output_format: 'png' };
    const base = await rgb((await runJob(engine, dirs, B1, req)).bytes);
    const manga = await rgb((await runJob(engine, dirs, B1, { ...req, style: 'manga' })).bytes);
    let colourful = 0;
    for (let i = 0; i < manga.data.length; i += 3) {
      if (manga.data[i] !== manga.data[i + 1] || manga.data[i] !== manga.data[i + 2]) colourful++;
    }
    expect(colourful).toBe(0);
    const max = await rgb((await runJob(engine, dirs, B1, { ...req, mode: 'max' })).bytes);
    const styled = await rgb((await runJob(engine, dirs, B1, { ...req, style_images: [{ url: 'https://x.test/a.png' }] })).bytes);
    expect(meanAbsDiff(base, max)).toBeGreaterThan(10);
    expect(meanAbsDiff(base, styled)).toBeGreaterThan(10);
  });

  it('gives identical JPEG bytes for an identical request', async () => {
    const req = { prompt: 'fog over a harbour', width: 800, height: 600, output_format: 'jpeg' };
    const [one, two] = [await runJob(engine, dirs, B1, req), await runJob(engine, dirs, B1, req)];
    expect(one.bytes.equals(two.bytes)).toBe(true);
  });
});

function changedFraction(a: Pixels, b: Pixels, threshold: number): number {
  let changed = 0;
  for (let i = 0; i < a.data.length; i += 3) {
    const d = Math.max(...[0, 1, 2].map((c) => Math.abs(a.data[i + c]! - b.data[i + c]!)));
    if (d > threshold) changed++;
  }
  return changed / (a.data.length / 3);
}

function ratioValue(ratio: string): number {
  const [w, h] = ratio.split(':').map(Number);
  return w! / h!;
}
