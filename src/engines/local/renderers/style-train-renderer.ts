import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { EngineError } from '../../engine.js';
import type { OutputFile } from '../../engine.js';
import { loadImageInside } from '../image/image-inputs.js';
import type { RawImage } from '../image/pixels.js';
import { writeImagePreview } from '../preview.js';
import type { ModelRenderer } from '../render-types.js';
import { optStr, str, strings } from '../request-fields.js';
import { INFLUENCE_BY_TYPE, toArtifact } from '../style/style-artifact.js';
import type { Style } from '../style/style-artifact.js';
import { composeCover } from '../style/style-cover.js';
import { fitPalette, samplePixels } from '../style/style-palette.js';
import { ANALYSIS_EDGE, chromaOf, contrastOf, lumaHistogram, textureOf, toneCurve } from '../style/style-stats.js';

/**
 * loraTraining on the local engine: no LoRA, but a style measured from the training images (palette,
 * tone curve, contrast, saturation, texture), written as the artifact model-a-2 applies, with a
 * cover image. docs/engine.md describes the measures and the request fields that steer them.
 */

export const COVER_PNG: OutputFile = Object.freeze({ name: 'cover.png', contentType: 'image/png' });
export const STYLE_JSON: OutputFile = Object.freeze({ name: 'style.json', contentType: 'application/json', role: 'style' });

/** Colours in a palette: enough for a look, few enough that each one matters. */
const PALETTE_COLOURS = 6;
/** One k-means round per 50 training steps, at most 40 (it usually settles well before). */
const STEPS_PER_ITERATION = 50;
const MAX_ITERATIONS = 40;

export function kmeansIterations(steps: number): number {
  return Math.min(MAX_ITERATIONS, Math.max(1, Math.ceil(steps / STEPS_PER_ITERATION)));
}

export const renderStyleTraining: ModelRenderer = async (_model, req, env) => {
  const urls = strings(req, 'urls');
  if (urls.length === 0) throw new EngineError('input_invalid', 'urls must name at least one training image');
  const images: RawImage[] = [];
  // One at a time: each is reduced to the analysis size as it is decoded, so memory stays small.
  for (const [i, url] of urls.entries()) images.push(await loadImageInside(env, url, `urls[${i}]`, ANALYSIS_EDGE));

  return {
    async render() {
      const { ctx } = env;
      const type = str(req, 'type', 'Style');
      // Validation filled in the default (models/style/lora-training.ts); the engine keeps no copy of it.
      const steps = req.max_train_steps;
      if (typeof steps !== 'number' || !Number.isSafeInteger(steps) || steps < 1) throw new EngineError('input_invalid', 'max_train_steps must be a whole number of steps, at least 1');
      const { style, iterations } = measureStyle(images, type, kmeansIterations(steps));
      const artifact = toArtifact(style, {
        baseModel: str(req, 'model', 'flux_dev'),
        triggerWord: optStr(req, 'trigger_word'),
        images: images.length,
        steps,
        iterations,
      });
      ctx.signal.throwIfAborted();
      const cover = await composeCover(images, style.palette);
      await sharp(cover.data, { raw: { width: cover.width, height: cover.height, channels: 3 } })
        .png()
        .toFile(join(ctx.outDir, COVER_PNG.name));
      await writeFile(join(ctx.outDir, STYLE_JSON.name), JSON.stringify(artifact));
      return { outputs: [COVER_PNG, STYLE_JSON], preview: await writeImagePreview(cover, ctx.outDir) };
    },
  };
};

/**
 * Each training image counts equally, whatever its size: the tone curve and contrast come from
 * the average of their normalised luminance histograms, saturation and texture are averaged, and
 * the palette is fitted to the same number of pixels from each.
 */
export function measureStyle(images: readonly RawImage[], type: string, iterations: number): { style: Style; iterations: number } {
  const combined = new Float64Array(256);
  let saturation = 0;
  const texture = { detail: 0, highFrequency: 0, grain: 0 };
  for (const img of images) {
    const hist = lumaHistogram(img);
    const pixels = img.width * img.height;
    for (let v = 0; v < 256; v++) combined[v]! += hist[v]! / pixels;
    saturation += chromaOf(img.data);
    const own = textureOf(img);
    texture.detail += own.detail;
    texture.highFrequency += own.highFrequency;
    texture.grain += own.grain;
  }
  const n = images.length;
  const fit = fitPalette(samplePixels(images), PALETTE_COLOURS, iterations);
  const style: Style = {
    type,
    palette: fit.colours,
    tone: toneCurve(combined),
    contrast: contrastOf(combined),
    saturation: saturation / n,
    texture: { detail: texture.detail / n, highFrequency: texture.highFrequency / n, grain: texture.grain / n },
    influence: INFLUENCE_BY_TYPE[type] ?? INFLUENCE_BY_TYPE.Style!,
  };
  return { style, iterations: fit.iterations };
}
