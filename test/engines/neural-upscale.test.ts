import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { esrgan } from '../../src/engines/local/image/esrgan.js';
import { NETWORKS, NEURAL_MAX_OUTPUT_MP, TILE, planNeural, upscaleTiled } from '../../src/engines/local/image/neural-upscale.js';
import type { UpscalePlan } from '../../src/engines/local/image/neural-upscale.js';
import type { RawImage } from '../../src/engines/local/image/pixels.js';
import type { UpstreamState } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { TempDirs, dataUri, fakeContext, rgb } from './engine-harness.js';
import { DRAWINGS, PHOTOS, lanczos, photo, psnr, raw, shrunk } from './upscale-references.js';

/**
 * The enhancers' neural upscaler (ESRGAN on TensorFlow.js wasm), measured: reference images
 * (test/engines/upscale-references.ts: photographs shipped under CC0 or in the public domain,
 * drawings made here), shrunk with lanczos3 and enlarged back, must come back closer to the
 * reference (PSNR over the raw RGB bytes) with the network than with lanczos3.
 */

const REFERENCES = DRAWINGS;

const never = new AbortController().signal;

/** What the renderer's x4 must gain over lanczos3 on every reference (issue 42). */
const X4_MARGIN_DB = 0.5;

async function gainAtX4(reference: RawImage): Promise<{ network: number; lanczos3: number }> {
  const small = await shrunk(reference, 4);
  const model = await esrgan(4, NETWORKS[4][0]!.size);
  const net = await upscaleTiled(small, 4, (p, w, h) => model.upscale(p, w, h), never);
  return { network: psnr(reference, net), lanczos3: psnr(reference, await lanczos(small, reference.width, reference.height)) };
}

// Slim, the x4 network before issue 42, gains 0.25 to 0.53 dB on the photographs and fails this.
describe(`the x4 network beats lanczos3 by ${X4_MARGIN_DB} dB PSNR on images shrunk 4 times`, { timeout: 120_000 }, () => {
  it.each([...PHOTOS])('photograph: %s', async (name) => {
    const { network, lanczos3 } = await gainAtX4(await raw(await photo(name)));
    console.log(`${name}: ESRGAN-${NETWORKS[4][0]!.size} ${network.toFixed(2)} dB, lanczos3 ${lanczos3.toFixed(2)} dB`);
    expect(network - lanczos3).toBeGreaterThanOrEqual(X4_MARGIN_DB);
  });

  it.each(Object.keys(DRAWINGS))('drawing: %s', async (name) => {
    const { network, lanczos3 } = await gainAtX4(await raw(DRAWINGS[name]!()));
    console.log(`${name}: ESRGAN-${NETWORKS[4][0]!.size} ${network.toFixed(2)} dB, lanczos3 ${lanczos3.toFixed(2)} dB`);
    expect(network - lanczos3).toBeGreaterThanOrEqual(X4_MARGIN_DB);
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
  const scaleOf = (plan: UpscalePlan) => (plan.upscaler === 'network' ? plan.scale : undefined);

  it('picks the smallest weights that reach the drawn size, x8 beyond, with the generator NETWORKS names for that scale', () => {
    expect([1.5, 2, 2.5, 3.5, 5, 12].map((f) => scaleOf(planNeural(src, 1, 1, f, 3600)))).toEqual([2, 2, 3, 4, 8, 8]);
    for (const f of [2, 4]) expect(planNeural(src, 1, 1, f, 3600)).toMatchObject({ upscaler: 'network', network: NETWORKS[f as 2 | 4][0]!.size });
    expect(planNeural(src, 1, 1, 4, 3600)).toMatchObject({ network: 'thick' });
    expect(planNeural(src, 1, 1, 2, 3600)).toMatchObject({ network: 'slim' });
  });

  it("falls back from thick to slim at x4 when thick's estimate does not fit in half the time left", () => {
    const thick = planNeural(src, 800, 400, 4, 3600);
    expect(thick).toMatchObject({ network: 'thick' });
    const estimated = thick.upscaler === 'network' ? thick.estimatedSeconds : NaN;
    expect(planNeural(src, 800, 400, 4, estimated * 1.5)).toMatchObject({ upscaler: 'network', network: 'slim', scale: 4 });
  });

  it('keeps lanczos3 alone when not enlarging, beyond the output limit, or when the deadline is too near, and says why', () => {
    expect(planNeural(src, 200, 100, 1, 3600)).toEqual({ upscaler: 'lanczos3', reason: 'the picture is not enlarged' });
    const side = Math.ceil(Math.sqrt(NEURAL_MAX_OUTPUT_MP * 1e6)) + 1;
    expect(planNeural(src, side, side, 4, 3600)).toEqual({ upscaler: 'lanczos3', reason: 'the output is larger than 4 megapixels' });
    // A 100 x 4000 strip cropped to fill 2000 x 2000: x8 would make 25.6 MP, mostly cut away.
    expect(planNeural({ width: 100, height: 4000 }, 2000, 2000, 20, 3600)).toEqual({ upscaler: 'lanczos3', reason: "the network's own output would be larger than 16 megapixels" });
    expect(planNeural(src, 800, 400, 4, 3600)).toMatchObject({ upscaler: 'network', scale: 4, width: 800, height: 400 });
    expect(planNeural(src, 800, 400, 4, 1)).toEqual({ upscaler: 'lanczos3', reason: "the network would not finish well before the job's timeout" });
  });
});

describe('standard-enhance uses it', { timeout: 60_000 }, () => {
  const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
  const dirs = new TempDirs();
  afterAll(() => dirs.cleanup());

  it('a 4x enhance of a photograph with the filters off gains the margin over lanczos3, and records which network ran', async () => {
    const reference = await raw(await photo('chelsea'));
    const small = await (await photo('chelsea')).resize(64, 64, { kernel: 'lanczos3' }).png().toBuffer();
    const saved: UpstreamState[] = [];
    const ctx = { ...fakeContext(await dirs.make()), upstream: { load: async () => undefined, save: async (state: UpstreamState) => void saved.push(state) } };
    const body = { image_url: dataUri(small), width: 256, height: 256, model: 'Standard V2', sharpen: 0, denoise: 0, fix_compression: 0, output_format: 'png' };
    await engine.run({ id: 'j', model: 'enhance/vendor-j/standard-enhance', request: body }, ctx);
    const out = await rgb(await readFile(join(ctx.outDir, 'output.png')));
    const baseline = await raw(sharp(small).resize(256, 256, { kernel: 'lanczos3' }));
    expect(psnr(reference, { ...out, data: Buffer.from(out.data) }) - psnr(reference, baseline)).toBeGreaterThanOrEqual(X4_MARGIN_DB);
    expect(saved).toEqual([{ engine: 'local', id: 'esrgan-thick x4', state: { upscaler: 'esrgan-thick', scale: 4 } }]);
  });

  it("reports the network's tiles as the job's progress, rising to 0.9", async () => {
    const small = await REFERENCES.edges!().resize(TILE * 2, TILE).png().toBuffer();
    const ctx = fakeContext(await dirs.make());
    const seen: number[] = [];
    ctx.progress = (fraction) => void seen.push(fraction);
    await engine.run({ id: 'j', model: 'enhance/vendor-j/standard-enhance', request: { image_url: dataUri(small), width: TILE * 4, height: TILE * 2 } }, ctx);
    expect(seen).toEqual([0.45, 0.9]);
  });

  it('uses lanczos3 alone when the deadline is too near for the network: no progress, the exact size, and the reason recorded', async () => {
    const small = await REFERENCES.edges!().resize(TILE * 2, TILE).png().toBuffer();
    const ctx = fakeContext(await dirs.make());
    const seen: number[] = [];
    const saved: UpstreamState[] = [];
    ctx.progress = (fraction) => void seen.push(fraction);
    const near = { ...ctx, deadlineMs: Date.now() + 500, progress: ctx.progress, upstream: { load: async () => undefined, save: async (state: UpstreamState) => void saved.push(state) } };
    await engine.run({ id: 'j', model: 'enhance/vendor-j/standard-enhance', request: { image_url: dataUri(small), width: TILE * 4, height: TILE * 2, output_format: 'png' } }, near);
    expect(seen).toEqual([]);
    expect(await sharp(await readFile(join(ctx.outDir, 'output.png'))).metadata()).toMatchObject({ width: TILE * 4, height: TILE * 2 });
    expect(saved).toEqual([{ engine: 'local', id: 'lanczos3', state: { upscaler: 'lanczos3', reason: "the network would not finish well before the job's timeout" } }]);
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
