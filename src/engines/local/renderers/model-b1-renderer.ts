import { join } from 'node:path';
import sharp from 'sharp';
import type { OutputFile } from '../../engine.js';
import { OUTPUT_PNG } from './model-a2-renderer.js';
import { LUMA_WEIGHTS } from '../image/pixels.js';
import type { ModelRenderer } from '../render-types.js';
import { writeImagePreview } from '../preview.js';
import { num, objects, str } from '../request-fields.js';
import { sceneSvg } from '../image/scene-svg.js';
import { canonicalJson } from '../../../lib/canonical-json.js';
import { Prng, sceneKey, unitHash } from '../seed.js';

/**
 * image/vendor-b/model-b-1: exactly `width` x `height` (rounded to whole pixels), PNG unless
 * `output_format` is `jpeg`.
 */

export const OUTPUT_JPEG: OutputFile = Object.freeze({ name: 'output.jpg', contentType: 'image/jpeg' });

const LUMA: [number, number, number] = [...LUMA_WEIGHTS];

const MAX_DETAILS = 4000;

const MIN_SIDE = 512;
const MAX_SIDE = 8192;

/** The pixel size for a requested side: the nearest whole number, kept within the schema's range. */
export function modelB1Side(value: number): number {
  return Math.min(MAX_SIDE, Math.max(MIN_SIDE, Math.round(value)));
}

export const renderModelB1: ModelRenderer = async (model, req, env) => {
  const width = modelB1Side(num(req, 'width', 1024));
  const height = modelB1Side(num(req, 'height', 1024));
  const jpeg = req.output_format === 'jpeg';
  const max = str(req, 'mode', 'standard') === 'max';
  const manga = str(req, 'style', 'auto') === 'manga';
  // Detail marks follow the area, so a large canvas is as busy as a small one.
  const megapixels = (width * height) / 2 ** 20;
  const { ctx } = env;

  return {
    async render() {
      const prng = new Prng(sceneKey(model, req));
      const svg = sceneSvg(prng.fork('scene'), {
        width,
        height,
        prompt: str(req, 'prompt', ''),
        hueShift: styleImagesHueShift(req),
        shapes: max ? 72 : 28,
        sizeFactor: max ? 0.8 : 1,
        tiltDeg: 30,
        skewDeg: 0,
        // Capped: at 8192 x 8192, tens of thousands of specks would triple the rasterising time.
        details: Math.min(MAX_DETAILS, Math.round((max ? 600 : 40) * megapixels)),
      });
      let pipeline = sharp(Buffer.from(svg), { limitInputPixels: false }).removeAlpha();
      // Manga: ink on paper. Grey (by a matrix, which keeps three channels), then a steep curve.
      if (manga) pipeline = pipeline.recomb([LUMA, LUMA, LUMA]).linear(2.2, -150);
      const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
      const image = { data, width: info.width, height: info.height };

      const out = sharp(data, { raw: { width, height, channels: 3 }, limitInputPixels: false });
      const file = jpeg ? OUTPUT_JPEG : OUTPUT_PNG;
      await (jpeg ? out.jpeg({ quality: 90 }) : out.png()).toFile(join(ctx.outDir, file.name));
      return { outputs: [file], preview: await writeImagePreview(image, ctx.outDir) };
    },
  };
};

/** `style_images` items have no documented fields: each turns the palette by an angle its JSON picks. */
function styleImagesHueShift(req: Readonly<Record<string, unknown>>): number {
  let shift = 0;
  for (const item of objects(req, 'style_images')) shift += 30 + 90 * unitHash(`style-image:${canonicalJson(item)}`);
  return shift;
}
