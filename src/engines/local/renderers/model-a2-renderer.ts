import { join } from 'node:path';
import sharp from 'sharp';
import type { OutputFile } from '../../engine.js';
import { loadImageCover, loadImageSoft } from '../image/image-inputs.js';
import { mix } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';
import type { ModelRenderer } from '../render-types.js';
import { writeImagePreview } from '../preview.js';
import { num, objects, optStr, str } from '../request-fields.js';
import type { Request } from '../request-fields.js';
import { hslToRgb, sceneSvg } from '../image/scene-svg.js';
import type { Rgb } from '../image/scene-svg.js';
import { Prng, sceneKey, unitHash } from '../seed.js';
import { applyStyles } from '../style/style-apply.js';
import { loadStyles } from '../style/style-artifact.js';

/**
 * image/vendor-a/model-a-2/{medium,large,medium-turbo}: a PNG near one megapixel at the requested
 * aspect ratio, every slider and reference visibly at work.
 */

/** Exact ratios, near 1 MP, even sides. docs/engine.md tables them. */
export const MODEL_A2_SIZES: Readonly<Record<string, readonly [number, number]>> = Object.freeze({
  '1:1': [1024, 1024],
  '4:3': [1152, 864],
  '3:2': [1248, 832],
  '16:9': [1344, 756],
  '2.35:1': [1504, 640],
  '4:5': [896, 1120],
  '2:3': [832, 1248],
  '9:16': [756, 1344],
});

/** Creativity adds detail: scattered specks of light, none when raw. */
const DETAILS_BY_CREATIVITY: Readonly<Record<string, number>> = { raw: 0, low: 60, medium: 250, high: 700 };

export const OUTPUT_PNG: OutputFile = Object.freeze({ name: 'output.png', contentType: 'image/png' });

interface StyleRef {
  readonly image: RawImage;
  readonly strength: number;
}

export const renderModelA2: ModelRenderer = async (model, req, env) => {
  const [width, height] = MODEL_A2_SIZES[str(req, 'aspect_ratio', '1:1')] ?? [1024, 1024];
  const { ctx } = env;

  const imageUrl = optStr(req, 'image_url');
  const init = imageUrl ? await loadImageCover(env, imageUrl, 'image_url', width, height) : undefined;
  const refs: StyleRef[] = [];
  for (const [i, ref] of objects(req, 'image_style_references').entries()) {
    const url = optStr(ref, 'url');
    if (!url) continue;
    const field = `image_style_references[${i}].url`;
    refs.push({ image: await loadImageSoft(env, url, field, width, height), strength: num(ref, 'strength', 0.5) });
  }
  const styles = await loadStyles(ctx, req);

  return {
    async render() {
      const prng = new Prng(sceneKey(model, withoutStyles(req)));
      const complexity = num(req, 'complexity', 0) / 100;
      const movement = num(req, 'movement', 0) / 100;
      const intensity = num(req, 'intensity', 0) / 100;
      const moodboard = objects(req, 'moodboards')[0];
      const moodStrength = moodboard ? num(moodboard, 'strength', 0.23) : 0;
      const moodId = moodboard ? str(moodboard, 'id', '') : '';

      const svg = sceneSvg(prng.fork('scene'), {
        width,
        height,
        prompt: str(req, 'prompt', ''),
        hueShift: moodboard ? (90 + 180 * unitHash(`moodboard:${moodId}`)) * moodStrength : 0,
        shapes: Math.round(28 * 2 ** (complexity * 2.5)),
        sizeFactor: 2 ** -complexity,
        tiltDeg: Math.abs(movement) * 90,
        skewDeg: movement * 35,
        details: DETAILS_BY_CREATIVITY[str(req, 'creativity', 'low')] ?? 60,
      });
      let pipeline = sharp(Buffer.from(svg)).removeAlpha();
      // Neutral intensity skips both operations: even an identity modulate rounds some pixels.
      if (intensity !== 0) {
        const contrast = 1 + intensity * 0.5;
        pipeline = pipeline.modulate({ saturation: 1 + intensity * 0.9 }).linear(contrast, 128 * (1 - contrast));
      }
      const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
      let image: RawImage = { data, width: info.width, height: info.height };

      if (moodboard) image = mix(image, moodTint(moodId), moodStrength * 0.6);
      for (const ref of refs) image = mix(image, ref.image, ref.strength * 0.5);
      image = await applyStyles(image, styles, prng.fork('styles'), ctx.signal);
      // Last, so strength 0 gives back the input image exactly and 1 the generated one.
      if (init) image = mix(init, image, num(req, 'strength', 0.99));

      await sharp(image.data, { raw: { width, height, channels: 3 } })
        .png()
        .toFile(join(ctx.outDir, OUTPUT_PNG.name));
      return { outputs: [OUTPUT_PNG], preview: await writeImagePreview(image, ctx.outDir) };
    },
  };
};

/**
 * Styles act only through applyStyles, not through the scene's seed, so a style at strength 0
 * gives exactly the bytes of the same request without it, seeded or not.
 */
function withoutStyles(req: Request): Request {
  return Object.fromEntries(Object.entries(req).filter(([key]) => key !== 'styles'));
}

function moodTint(id: string): Rgb {
  return hslToRgb(unitHash(`moodboard-tint:${id}`) * 360, 0.8, 0.5);
}
