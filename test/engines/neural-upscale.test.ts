import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { esrgan } from '../../src/engines/local/image/esrgan.js';
import { NEURAL_MAX_OUTPUT_MP, TILE, planNeural, upscaleTiled } from '../../src/engines/local/image/neural-upscale.js';
import type { RawImage } from '../../src/engines/local/image/pixels.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { TempDirs, dataUri, fakeContext, rgb, runJob } from './engine-harness.js';

/**
 * The enhancers' neural upscaler (ESRGAN slim on TensorFlow.js wasm), measured: reference images
 * made here (edges, text, a texture), shrunk 4 times with lanczos3 and enlarged back, must come
 * back closer to the reference (PSNR over the raw RGB bytes) with the network than with lanczos3.
 */

/** Drawn on a 96 x 96 canvas, rendered at 384 x 384 and shrunk to 96 x 96 (at 48, the texture's margin was 0.02 dB). */
const SIZE = 384;

async function raw(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

const svg = (body: string) => sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 96 96">${body}</svg>`));

const REFERENCES: Record<string, () => Sharp> = {
  edges: () =>
    svg(
      '<rect width="96" height="96" fill="#f2efe6"/><rect x="10" y="12" width="40" height="30" fill="#1d3557"/>' +
        '<circle cx="64" cy="60" r="22" fill="#e63946"/><polygon points="8,90 40,52 52,88" fill="#2a9d8f"/>' +
        '<line x1="0" y1="0" x2="96" y2="70" stroke="#111" stroke-width="3"/>',
    ),
  text: () =>
    svg(
      '<rect width="96" height="96" fill="white"/>' +
        '<text x="4" y="30" font-family="sans-serif" font-size="26" font-weight="bold" fill="black">Abc</text>' +
        '<text x="4" y="62" font-family="serif" font-size="22" fill="#203080">xyz42</text>' +
        '<text x="4" y="90" font-family="sans-serif" font-size="20" fill="#802020">HELLO</text>',
    ),
  texture: () =>
    svg(
      '<defs><pattern id="b" width="24" height="12" patternUnits="userSpaceOnUse">' +
        '<rect width="24" height="12" fill="#a0522d"/><rect x="1" y="1" width="22" height="4" fill="#c8703e"/>' +
        '<rect x="-11" y="7" width="22" height="4" fill="#b8602e"/><rect x="13" y="7" width="22" height="4" fill="#d07a44"/></pattern></defs>' +
        '<rect width="96" height="96" fill="url(#b)"/><circle cx="48" cy="48" r="18" fill="none" stroke="#fff" stroke-width="2"/>',
    ),
};

function psnr(a: RawImage, b: RawImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += (a.data[i]! - b.data[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / (sum / a.data.length));
}

const never = new AbortController().signal;

describe('ESRGAN x4 beats lanczos3 on PSNR against the reference, on images shrunk 4 times', { timeout: 60_000 }, () => {
  it.each(Object.keys(REFERENCES))('%s', async (name) => {
    const reference = await raw(REFERENCES[name]!());
    const small = await raw(REFERENCES[name]!().resize(SIZE / 4, SIZE / 4, { kernel: 'lanczos3' }));
    const model = await esrgan(4);
    const neural = await upscaleTiled(small, 4, (p, w, h) => model.upscale(p, w, h), never);
    const lanczos = await raw(sharp(small.data, { raw: { width: small.width, height: small.height, channels: 3 } }).resize(SIZE, SIZE, { kernel: 'lanczos3' }));
    const [n, l] = [psnr(reference, neural), psnr(reference, lanczos)];
    console.log(`${name}: ESRGAN ${n.toFixed(2)} dB, lanczos3 ${l.toFixed(2)} dB`);
    expect(n).toBeGreaterThan(l);
  });
});

describe('tiling', { timeout: 60_000 }, () => {
  it('leaves no seams: the tiled result equals the whole picture run at once, within one level', async () => {
    const img = await raw(REFERENCES.edges!().resize(TILE * 2 + 20, TILE + 30, { fit: 'fill' }));
    const model = await esrgan(2);
    const tiled = await upscaleTiled(img, 2, (p, w, h) => model.upscale(p, w, h), never);
    const whole = await model.upscale(img.data, img.width, img.height);
    let worst = 0;
    for (let i = 0; i < whole.length; i++) worst = Math.max(worst, Math.abs(whole[i]! - tiled.data[i]!));
    expect([tiled.width, tiled.height]).toEqual([img.width * 2, img.height * 2]);
    expect(worst).toBeLessThanOrEqual(1);
  });

  it('stops between tiles when the signal aborts, with its reason', async () => {
    const img = await raw(REFERENCES.text!().resize(TILE * 3, TILE * 3));
    const controller = new AbortController();
    const reason = new Error('cancelled');
    let tiles = 0;
    const run = upscaleTiled(img, 2, async (p, w, h) => ((tiles += 1), Buffer.alloc(w * h * 12)), controller.signal, (done) => done > 0.3 && controller.abort(reason));
    await expect(run).rejects.toBe(reason);
    expect(tiles).toBe(3);
  });
});

describe('the plan', () => {
  const src = { width: 200, height: 100 };
  it('picks the smallest weights that reach the drawn size, x8 beyond', () => {
    expect([1.5, 2, 2.5, 3.5, 5, 12].map((f) => planNeural(src, 1, 1, f, 3600)?.scale)).toEqual([2, 2, 3, 4, 8, 8]);
  });

  it('keeps lanczos3 alone when not enlarging, beyond the output limit, or when the deadline is too near', () => {
    expect(planNeural(src, 200, 100, 1, 3600)).toBeUndefined();
    const side = Math.ceil(Math.sqrt(NEURAL_MAX_OUTPUT_MP * 1e6)) + 1;
    expect(planNeural(src, side, side, 4, 3600)).toBeUndefined();
    // A 100 x 4000 strip cropped to fill 2000 x 2000: x8 would make 25.6 MP, mostly cut away.
    expect(planNeural({ width: 100, height: 4000 }, 2000, 2000, 20, 3600)).toBeUndefined();
    const plan = planNeural(src, 800, 400, 4, 3600)!;
    expect(plan).toMatchObject({ scale: 4, width: 800, height: 400 });
    expect(planNeural(src, 800, 400, 4, plan.estimatedSeconds * 1.5)).toBeUndefined();
  });
});

describe('standard-enhance uses it', { timeout: 60_000 }, () => {
  const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
  const dirs = new TempDirs();
  afterAll(() => dirs.cleanup());

  it('a 4x enhance with the filters off is closer to the reference than lanczos3', async () => {
    const reference = await raw(REFERENCES.text!());
    const small = await REFERENCES.text!().resize(SIZE / 4, SIZE / 4, { kernel: 'lanczos3' }).png().toBuffer();
    const body = { image_url: dataUri(small), width: SIZE, height: SIZE, model: 'Standard V2', sharpen: 0, denoise: 0, fix_compression: 0, output_format: 'png' };
    const out = await rgb((await runJob(engine, dirs, 'enhance/vendor-j/standard-enhance', body)).bytes);
    const lanczos = await raw(sharp(small).resize(SIZE, SIZE, { kernel: 'lanczos3' }));
    expect(psnr(reference, { ...out, data: Buffer.from(out.data) })).toBeGreaterThan(psnr(reference, lanczos));
  });

  it("reports the network's tiles as the job's progress, rising to 0.9", async () => {
    const small = await REFERENCES.edges!().resize(TILE * 2, TILE).png().toBuffer();
    const ctx = fakeContext(await dirs.make());
    const seen: number[] = [];
    ctx.progress = (fraction) => void seen.push(fraction);
    await engine.run({ id: 'j', model: 'enhance/vendor-j/standard-enhance', request: { image_url: dataUri(small), width: TILE * 4, height: TILE * 2 } }, ctx);
    expect(seen).toEqual([0.45, 0.9]);
  });

  it('uses lanczos3 alone when the deadline is too near for the network: no progress, the exact size', async () => {
    const small = await REFERENCES.edges!().resize(TILE * 2, TILE).png().toBuffer();
    const ctx = fakeContext(await dirs.make());
    const seen: number[] = [];
    ctx.progress = (fraction) => void seen.push(fraction);
    const near = { ...ctx, deadlineMs: Date.now() + 500, progress: ctx.progress };
    await engine.run({ id: 'j', model: 'enhance/vendor-j/standard-enhance', request: { image_url: dataUri(small), width: TILE * 4, height: TILE * 2, output_format: 'png' } }, near);
    expect(seen).toEqual([]);
    expect(await sharp(await readFile(join(ctx.outDir, 'output.png'))).metadata()).toMatchObject({ width: TILE * 4, height: TILE * 2 });
  });
});

describe('loading', { timeout: 60_000 }, () => {
  const dirs = new TempDirs();
  afterAll(() => dirs.cleanup());

  it('a process that loads the local engine but never upscales never loads TensorFlow.js; the first model loads it', async () => {
    const src = (rel: string) => fileURLToPath(new URL(`../../src/engines/local/${rel}`, import.meta.url));
    const script = join(await dirs.make(), 'lazy.mjs');
    await writeFile(
      script,
      [
        "import { createRequire } from 'node:module';",
        'const r = createRequire(import.meta.url);',
        "const loaded = () => Object.keys(r.cache).some((k) => k.includes('@tensorflow'));",
        `await import(${JSON.stringify(src('local-engine.ts'))});`,
        'const before = loaded();',
        `const { esrgan } = await import(${JSON.stringify(src('image/esrgan.ts'))});`,
        'await esrgan(2);',
        'console.log(JSON.stringify({ before, after: loaded() }));',
      ].join('\n'),
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ before: false, after: true });
  });
});
