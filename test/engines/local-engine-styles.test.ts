import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { StyleArtifact } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { TempDirs, dataUri, fakeContext, meanAbsDiff, rgb } from './engine-harness.js';
import type { Pixels } from './engine-harness.js';
import { DECILES, coolImages, lumaQuantiles, meanChroma, paletteDistance, toneDistance, warmImages } from './style-fixtures.js';
import type { ArtifactPalette } from './style-fixtures.js';

const TRAIN = 'loraTraining';
const A2 = 'image/vendor-a/model-a-2/medium';

const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

type Artifact = StyleArtifact & ArtifactPalette & Record<string, unknown>;

interface Measured {
  readonly contrast: number;
  readonly saturation: number;
  readonly texture: { readonly detail: number; readonly high_frequency: number; readonly grain: number };
}

interface Trained {
  readonly artifact: Artifact;
  readonly json: Buffer;
  readonly cover: Buffer;
  readonly outputs: unknown[];
  readonly ctx: ReturnType<typeof fakeContext>;
}

async function train(images: readonly Buffer[], extra: Record<string, unknown> = {}): Promise<Trained> {
  const ctx = fakeContext(await dirs.make());
  // As validation hands it over: max_train_steps has its default.
  const request = { name: 'test style', urls: images.map((b) => dataUri(b)), max_train_steps: 1000, ...extra };
  const outputs = await engine.run({ id: 'train-1', model: TRAIN, request }, ctx);
  const json = await readFile(join(ctx.outDir, 'style.json'));
  const cover = await readFile(join(ctx.outDir, 'cover.png'));
  return { artifact: JSON.parse(json.toString('utf8')) as Artifact, json, cover, outputs, ctx };
}

function a2(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { prompt: 'a lighthouse in a storm', aspect_ratio: '1:1', resolution: '1K', seed: 42, ...extra };
}

async function render(request: Record<string, unknown>, styles: Record<string, StyleArtifact> = {}): Promise<Buffer> {
  const ctx = fakeContext(await dirs.make(), {}, undefined, styles);
  const outputs = await engine.run({ id: 'a2', model: A2, request }, ctx);
  return readFile(join(ctx.outDir, outputs[0]!.name));
}

/** The training images' own pixels, pooled, as the measures' reference. */
async function pooled(images: readonly Buffer[]): Promise<Pixels> {
  const all = await Promise.all(images.map((b) => rgb(b)));
  return { data: Buffer.concat(all.map((p) => p.data)), width: all.reduce((s, p) => s + p.width * p.height, 0), height: 1 };
}

let warm: Buffer[];
let cool: Buffer[];
let warmStyle: Trained;
let coolStyle: Trained;
beforeAll(async () => {
  [warm, cool] = await Promise.all([warmImages(), coolImages()]);
  warmStyle = await train(warm, { type: 'Style', trigger_word: 'emberish' });
  coolStyle = await train(cool);
}, 60_000);

describe('loraTraining on the local engine', () => {
  it('reads every training image and writes a cover PNG first, then the style artifact', async () => {
    const { outputs, ctx, cover, json, artifact } = warmStyle;
    expect(outputs).toEqual([
      { name: 'cover.png', contentType: 'image/png' },
      { name: 'style.json', contentType: 'application/json', role: 'style' },
    ]);
    expect(ctx.loaded).toEqual(['urls[0]', 'urls[1]', 'urls[2]']);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    expect(ctx.stages[2]).toMatchObject({ preview: { name: 'preview.jpg' }, previewExisted: true });

    expect(isPng(cover)).toBe(true);
    expect(readPngSize(cover)).toEqual({ width: 1024, height: 1024 });
    // The band along the bottom shows the palette's colours.
    const bottom = await rgb(cover);
    const row = (bottom.height - 10) * bottom.width * 3;
    const bandColours = new Set<string>();
    for (let x = 0; x < bottom.width; x += 16) bandColours.add(bottom.data.subarray(row + x * 3, row + x * 3 + 3).join(','));
    for (const c of artifact.palette) expect(bandColours.has(c.rgb.join(','))).toBe(true);

    expect(json.length).toBeLessThanOrEqual(64 * 1024);
    expect(artifact).toMatchObject({ format: 'mediagen-style/1', type: 'Style', base_model: 'flux_dev', trigger_word: 'emberish', images: 3 });
    // The three colours the images are made of, within a few levels, in proportion.
    const nearest = (hex: string) => {
      const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      return Math.min(...artifact.palette.map((c) => Math.hypot(...c.rgb.map((v, k) => v - want[k]!))));
    };
    for (const colour of ['#280500', '#ff7510', '#ffc039']) expect(nearest(colour), colour).toBeLessThan(20);
    expect(artifact.palette.reduce((s, c) => s + c.weight, 0)).toBeCloseTo(1, 3);
    expect(artifact.tone).toHaveLength(17);
    expect([...artifact.tone].sort((x, y) => x - y)).toEqual(artifact.tone);
  });

  it('measures the images: warm contrast and colour, cool flatness and grain', () => {
    const [w, c] = [warmStyle.artifact, coolStyle.artifact] as unknown as Measured[];
    expect(w!.contrast).toBeGreaterThan(0.25);
    expect(c!.contrast).toBeLessThan(0.05);
    expect(w!.saturation).toBeGreaterThan(c!.saturation + 0.2);
    expect(c!.texture.grain).toBeGreaterThan(w!.texture.grain + 1);
    expect(c!.texture.high_frequency).toBeGreaterThan(w!.texture.high_frequency);
    expect(coolStyle.artifact.palette.every((p) => p.rgb[2]! > p.rgb[0]!)).toBe(true);
  });

  it('gives identical files for identical training', async () => {
    const again = await train(warm, { type: 'Style', trigger_word: 'emberish' });
    expect(again.json.equals(warmStyle.json)).toBe(true);
    expect(again.cover.equals(warmStyle.cover)).toBe(true);
  });

  it('bounds the palette fitting by max_train_steps and weights the statistics by type', async () => {
    const short = await train(cool, { max_train_steps: 1 });
    expect(short.artifact.training).toEqual({ max_train_steps: 1, kmeans_iterations: 1 });
    expect((coolStyle.artifact.training as Record<string, number>).kmeans_iterations).toBeLessThanOrEqual(20);
    const object = await train(warm, { type: 'Object' });
    expect(object.artifact.influence).toEqual({ palette: 1, tone: 0.5, colour: 0.75, texture: 0.4 });
    expect(warmStyle.artifact.influence).toEqual({ palette: 1, tone: 1, colour: 1, texture: 1 });
  });

  it('fails input_invalid naming a training image that is not one, before processing', async () => {
    const ctx = fakeContext(await dirs.make());
    const urls = [dataUri(warm[0]!), dataUri(Buffer.from('just some words'), 'text/plain')];
    const err = await engine.run({ id: 'j', model: TRAIN, request: { name: 'x', urls } }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(/^urls\[1\] is a text file, not a raster image/) });
    expect(ctx.stages).toEqual([]);
  });

  it('fails input_too_large when a training image claims more pixels than the decoder limit', async () => {
    const small = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, limits: { imagePixels: 30_000 } });
    const ctx = fakeContext(await dirs.make());
    const run = small.run({ id: 'j', model: TRAIN, request: { name: 'x', urls: warm.map((b) => dataUri(b)) } }, ctx);
    await expect(run).rejects.toMatchObject({ code: 'input_too_large', message: expect.stringMatching(/^urls\[0\]/) });
    expect(ctx.stages).toEqual([]);
  });
});

describe('styles on model-a-2', () => {
  it('leaves the bytes untouched at strength 0, seeded or not', async () => {
    for (const seed of [42, null]) {
      const plain = await render(a2({ seed }));
      const zero = await render(a2({ seed, styles: [{ id: 'warm', strength: 0 }] }), { warm: warmStyle.artifact });
      expect(zero.equals(plain), `seed ${seed}`).toBe(true);
    }
  });

  it('moves toward the training images as strength grows, and away from them when negative', async () => {
    const reference = await pooled(warm);
    const training = lumaQuantiles(reference, DECILES);
    const measures: Record<number, { palette: number; tone: number; chroma: number }> = {};
    for (const strength of [-1, 0, 1, 2]) {
      const px = await rgb(await render(a2({ styles: [{ id: 'warm', strength }] }), { warm: warmStyle.artifact }));
      measures[strength] = { palette: paletteDistance(px, warmStyle.artifact.palette), tone: toneDistance(px, training), chroma: meanChroma(px) };
    }
    const [away, none, half, full] = [measures[-1]!, measures[0]!, measures[1]!, measures[2]!];
    expect(half.palette).toBeLessThan(none.palette - 15);
    expect(full.palette).toBeLessThan(half.palette - 15);
    expect(away.palette).toBeGreaterThan(none.palette + 10);
    expect(half.tone).toBeLessThan(none.tone - 5);
    expect(full.tone).toBeLessThan(half.tone);
    expect(away.tone).toBeGreaterThan(none.tone + 5);
    // The training images are more colourful than the plain render: more chroma toward them.
    const trainingChroma = meanChroma(reference);
    expect(Math.abs(full.chroma - trainingChroma)).toBeLessThan(Math.abs(none.chroma - trainingChroma));
  });

  it('gives measurably different pictures for different styles, and combines several', async () => {
    const styles = { warm: warmStyle.artifact, cool: coolStyle.artifact };
    const [warmPx, coolPx, bothPx] = await Promise.all(
      [[{ id: 'warm', strength: 1.5 }], [{ id: 'cool', strength: 1.5 }], [{ id: 'warm', strength: 1.5 }, { id: 'cool', strength: 1.5 }]].map(
        async (s) => rgb(await render(a2({ styles: s }), styles)),
      ),
    );
    expect(meanAbsDiff(warmPx!, coolPx!)).toBeGreaterThan(30);
    expect(paletteDistance(warmPx!, warmStyle.artifact.palette)).toBeLessThan(paletteDistance(coolPx!, warmStyle.artifact.palette) - 20);
    expect(paletteDistance(coolPx!, coolStyle.artifact.palette)).toBeLessThan(paletteDistance(warmPx!, coolStyle.artifact.palette) - 20);
    expect(meanAbsDiff(bothPx!, warmPx!)).toBeGreaterThan(5);
    expect(meanAbsDiff(bothPx!, coolPx!)).toBeGreaterThan(5);
  });

  it('refuses an artifact it cannot read as input_invalid, naming the item, before processing', async () => {
    const broken: StyleArtifact[] = [
      { format: 'someone-else/9' },
      { ...warmStyle.artifact, palette: [] },
      { ...warmStyle.artifact, tone: [...warmStyle.artifact.tone].reverse() },
      { ...warmStyle.artifact, texture: { detail: 'lots' } },
    ];
    for (const artifact of broken) {
      const ctx = fakeContext(await dirs.make(), {}, undefined, { ok: warmStyle.artifact, bad: artifact });
      const request = a2({ styles: [{ id: 'ok', strength: 1 }, { id: 'bad', strength: 1 }] });
      const err = await engine.run({ id: 'j', model: A2, request }, ctx).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'input_invalid', message: 'styles[1].id names a style whose data this engine cannot apply' });
      expect(ctx.stages).toEqual([]);
    }
    const ctx = fakeContext(await dirs.make());
    await expect(engine.run({ id: 'j', model: A2, request: a2({ styles: [{ id: 'gone', strength: 1 }] }) }, ctx)).rejects.toMatchObject({
      code: 'input_invalid',
    });
    expect(ctx.stages).toEqual([]);
  });
});
