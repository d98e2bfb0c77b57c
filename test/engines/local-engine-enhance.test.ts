import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { isJpeg, isPng } from '../helpers/media.js';
import { LAVFI_VIDEO, ffmpegFile } from './asset-fixtures.js';
import { blockiness, blockyJpeg, laplacianVariance, lumaStdDev, noisyGrey, pixelAt, redBlue, softImage } from './enhance-fixtures.js';
import { TempDirs, dataUri, fakeContext, meanAbsDiff, meanColour, rgb, runJob } from './engine-harness.js';

const STANDARD = 'enhance/vendor-j/standard-enhance';
const GENERATIVE = 'enhance/vendor-j/generative-enhance';

const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const OFF = { sharpen: 0, denoise: 0, fix_compression: 0 };

let soft: string;
beforeAll(async () => {
  soft = dataUri(await softImage(160, 120));
});

function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { image_url: soft, width: 320, height: 240, model: 'Standard V2', ...extra };
}

const isWebp = (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP';

describe('standard-enhance output', () => {
  it.each([
    ['png', 'image/png', 'png', isPng],
    ['jpg', 'image/jpeg', 'jpeg', isJpeg],
    ['webp', 'image/webp', 'webp', isWebp],
  ] as const)('writes exactly width x height as %s, read back from the file', async (format, type, decoded, magic) => {
    const { bytes, outputs, ctx } = await runJob(engine, dirs, STANDARD, body({ width: 333, height: 211, output_format: format }));
    expect(outputs).toEqual([{ name: `output.${format}`, contentType: type }]);
    expect(magic(bytes)).toBe(true);
    const meta = await sharp(bytes).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: decoded, width: 333, height: 211 });
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    const preview = await sharp(await readFile(join(ctx.outDir, 'preview.jpg'))).metadata();
    expect([preview.format, Math.max(preview.width, preview.height)]).toEqual(['jpeg', 512]);
  });

  it('writes a jpg when output_format is absent (the default)', async () => {
    const { bytes, outputs } = await runJob(engine, dirs, STANDARD, body());
    expect(outputs[0]!.name).toBe('output.jpg');
    expect(isJpeg(bytes)).toBe(true);
  });

  it('crop_to_fill true crops the picture to cover the frame; false fits it whole between black bars', async () => {
    const wide = dataUri(await redBlue(200, 100));
    const cover = await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, image_url: wide, width: 100, height: 100, crop_to_fill: true, output_format: 'png' }))).bytes);
    const fit = await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, image_url: wide, width: 100, height: 100, crop_to_fill: false, output_format: 'png' }))).bytes);
    for (const p of [cover, fit]) expect([p.width, p.height]).toEqual([100, 100]);
    // Cover: the middle 100 x 100 of the 200 x 100 picture, so red and blue reach every edge.
    expect(pixelAt(cover, 10, 2)[0]).toBeGreaterThan(200);
    expect(pixelAt(cover, 90, 97)[2]).toBeGreaterThan(200);
    // Fit: the whole picture at 100 x 50 in the middle, black above and below.
    for (const [x, y] of [[10, 2], [90, 97], [50, 20]] as const) expect(Math.max(...pixelAt(fit, x, y))).toBeLessThan(10);
    expect(pixelAt(fit, 10, 50)[0]).toBeGreaterThan(200);
    expect(pixelAt(fit, 90, 50)[2]).toBeGreaterThan(200);
  });
});

describe('standard-enhance filters, each against the same render with it off', () => {
  it('sharpen raises the Laplacian variance (the focus measure) of an upscaled soft image', async () => {
    const off = await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, output_format: 'png' }))).bytes);
    const on = await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, sharpen: 1, output_format: 'png' }))).bytes);
    expect(laplacianVariance(on)).toBeGreaterThan(1.5 * laplacianVariance(off));
  });

  it('denoise lowers the noise of a noisy grey image, and strength scales it', async () => {
    const noisy = dataUri(await noisyGrey(128, 128, 20));
    const run = async (extra: Record<string, unknown>) =>
      lumaStdDev(await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, image_url: noisy, width: 128, height: 128, output_format: 'png', ...extra }))).bytes));
    const [off, full, weak] = [await run({}), await run({ denoise: 1 }), await run({ denoise: 1, strength: 0.3 })];
    expect(off).toBeGreaterThan(15);
    expect(full).toBeLessThan(0.6 * off);
    expect(weak).toBeLessThan(off);
    expect(weak).toBeGreaterThan(full);
  });

  it('fix_compression lowers the blockiness of a heavily compressed JPEG', async () => {
    const blocky = dataUri(await blockyJpeg(256, 256), 'image/jpeg');
    const run = async (fix: number) =>
      blockiness(await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, image_url: blocky, width: 256, height: 256, fix_compression: fix, output_format: 'png' }))).bytes));
    const [off, on] = [await run(0), await run(1)];
    expect(off).toBeGreaterThan(1.5);
    expect(on).toBeLessThan(off - 0.4 * (off - 1));
  });

  it("uses the model's own settings for the filters a request leaves out", async () => {
    const focus = async (model: string) => laplacianVariance(await rgb((await runJob(engine, dirs, STANDARD, body({ model, output_format: 'png' }))).bytes));
    expect(await focus('Text Refine')).toBeGreaterThan(await focus('High Fidelity V2'));
  });
});

describe('generative-enhance', () => {
  const gen = (extra: Record<string, unknown> = {}) => body({ model: 'Redefine', prompt: 'autumn forest', seed: 7, output_format: 'png', ...OFF, ...extra });

  it('adds a seeded grain and a prompt grade: the same seed gives the same bytes, another seed other bytes', async () => {
    const [a, b, c] = await Promise.all([runJob(engine, dirs, GENERATIVE, gen()), runJob(engine, dirs, GENERATIVE, gen()), runJob(engine, dirs, GENERATIVE, gen({ seed: 8 }))]);
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(a.bytes.equals(c.bytes)).toBe(false);
    const meta = await sharp(a.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 320, 240]);
  });

  it('departs further from the standard render as creativity rises, and the prompt moves the colours', async () => {
    const plain = await rgb((await runJob(engine, dirs, STANDARD, body({ ...OFF, output_format: 'png' }))).bytes);
    const at = async (extra: Record<string, unknown>) => rgb((await runJob(engine, dirs, GENERATIVE, gen(extra))).bytes);
    const [low, high] = [await at({ creativity: 1 }), await at({ creativity: 6 })];
    expect(meanAbsDiff(plain, low)).toBeGreaterThan(0.3);
    expect(meanAbsDiff(plain, high)).toBeGreaterThan(2 * meanAbsDiff(plain, low));
    const other = await at({ creativity: 6, prompt: 'neon city at night' });
    const shift = meanColour(other).map((v, i) => Math.abs(v - meanColour(high)[i]!));
    expect(Math.max(...shift)).toBeGreaterThan(1);
  });
});

describe('enhance inputs', () => {
  it('reads an http(s) input through the context, like an asset or external URL', async () => {
    const png = await softImage(90, 60);
    const { bytes, ctx } = await runJob(engine, dirs, STANDARD, body({ image_url: 'https://assets.example/in.png', width: 180, height: 120 }), { 'https://assets.example/in.png': png });
    expect(ctx.loaded).toEqual(['image_url']);
    expect(await sharp(bytes).metadata()).toMatchObject({ width: 180, height: 120 });
  });

  it('fails with input_invalid, before processing, when image_url is a video', async () => {
    const mp4 = await readFile(await ffmpegFile(await dirs.make(), 'in.mp4', ['-y', ...LAVFI_VIDEO(1), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']));
    const ctx = fakeContext(await dirs.make());
    const err = await engine.run({ id: 'j', model: STANDARD, request: body({ image_url: dataUri(mp4, 'video/mp4') }) }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(/^image_url is an? .*video/i) });
    expect(ctx.stages).toEqual([]);
  });

  it('fails with input_too_large when the image claims more pixels than the decoder limit', async () => {
    const small = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, limits: { imagePixels: 10_000 } });
    const ctx = fakeContext(await dirs.make());
    const run = small.run({ id: 'j', model: STANDARD, request: body() }, ctx);
    await expect(run).rejects.toMatchObject({ code: 'input_too_large' });
    expect(ctx.stages).toEqual([]);
  });
});

describe('enhance cancel', () => {
  it('stops a large render when the job is cancelled mid-render, with the reason and no output', async () => {
    const reason = new Error('cancelled while rendering');
    let abortedAt = 0;
    const ctx = fakeContext(await dirs.make(), {}, (stage) => {
      // Let the render start, then cancel it.
      if (stage === 'sampling') setTimeout(() => ((abortedAt = Date.now()), ctx.controller.abort(reason)), 30);
    });
    const large = body({ image_url: dataUri(await noisyGrey(1500, 1500, 10)), width: 6000, height: 6000, model: 'Recovery V2', creativity: 6, output_format: 'png' });
    await expect(engine.run({ id: 'j', model: GENERATIVE, request: large }, ctx)).rejects.toBe(reason);
    expect(abortedAt).toBeGreaterThan(0);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    expect((await readdir(ctx.outDir)).filter((f) => !f.startsWith('.work-'))).toEqual([]);
  });
});

describe('simulated latency (--engine-latency-ms)', () => {
  const slow = () => new LocalEngine({ clock: new ManualClock(0), latencyMs: 600_000 });

  it.each([STANDARD, GENERATIVE])('does not delay %s, whose render is the real work: it completes with the clock never advanced', async (model) => {
    const { outputs, ctx } = await runJob(slow(), dirs, model, body({ ...OFF, output_format: 'png', ...(model === GENERATIVE ? { model: 'Redefine', prompt: 'x' } : {}) }));
    expect(outputs[0]!.name).toBe('output.png');
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
  });

  it('still delays a procedural stand-in: model-a-2 waits on the clock before its first stage', async () => {
    const clock = new ManualClock(0);
    const ctx = fakeContext(await dirs.make());
    const run = new LocalEngine({ clock, latencyMs: 600_000 }).run({ id: 'j', model: 'image/vendor-a/model-a-2/medium', request: { prompt: 'a lighthouse' } }, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.sleepers).toBe(1);
    expect(ctx.stages).toEqual([]);
    ctx.controller.abort(new Error('stop'));
    await expect(run).rejects.toThrow('stop');
  });
});
