import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { FACE_LIMIT_DEFAULT, FACE_LIMIT_MAX, FACE_LIMIT_MIN } from '../../../models/3d/model-k-1.js';
import type { OutputFile } from '../../engine.js';
import { encodeGlb } from '../mesh/gltf.js';
import { loadImageInside } from '../image/image-inputs.js';
import { checkpoint, renderMeshPreview, srgbToLinear } from '../mesh/mesh-preview.js';
import { meanColour } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';
import { buildRelief, reliefGrid } from '../mesh/relief-mesh.js';
import type { HeightField, ReliefShape } from '../mesh/relief-mesh.js';
import type { ModelRenderer } from '../render-types.js';
import { bool, num, str } from '../request-fields.js';

/**
 * 3d/vendor-k/model-k-1: the image as a closed relief (relief-mesh.ts), its luminance as height,
 * in binary glTF 2.0 textured with the image (or in its mean colour when `texture` is false), at
 * most `face_limit` triangles; and a shaded render of that mesh as the preview. The relief is a
 * function of the image and face_limit alone: `prompt` and `seed` are kept with the job, as there
 * is no generative step here for them to steer (docs/engine.md).
 */

export const MODEL_GLB: OutputFile = Object.freeze({ name: 'model.glb', contentType: 'model/gltf-binary', role: 'model' });
export const PREVIEW_PNG: OutputFile = Object.freeze({ name: 'preview.png', contentType: 'image/png', role: 'preview' });

/** The input is read at most this large: the texture's size and the finest grid the relief can use. */
const IMAGE_EDGE = 1024;
export const PREVIEW_SIZE = 512;
/** The longer side of the slab is 1 m; the relief rises up to 12 cm above a 4 cm base. */
const SHAPE = { base: 0.04, depth: 0.12 } as const;
const ROUGHNESS = 0.8;
const GENERATOR = 'mediagen local engine (3d/vendor-k/model-k-1)';

export const renderModelK1: ModelRenderer = async (_model, req, env) => {
  const faceLimit = Math.min(FACE_LIMIT_MAX, Math.max(FACE_LIMIT_MIN, Math.floor(num(req, 'face_limit', FACE_LIMIT_DEFAULT))));
  const textured = bool(req, 'texture', true);
  const image = await loadImageInside(env, str(req, 'image_url', ''), 'image_url', IMAGE_EDGE);
  const { signal, outDir } = env.ctx;

  return {
    async render() {
      const aspect = image.width / image.height;
      const field = await heightField(image, reliefGrid(faceLimit, aspect, image));
      await checkpoint(signal);
      const shape: ReliefShape = { ...SHAPE, sizeX: Math.min(1, aspect), sizeY: Math.min(1, 1 / aspect) };
      const mesh = buildRelief(field, shape, textured);
      const mean = meanColour(image);
      const texturePng = textured ? await squareTexture(image) : undefined;
      await checkpoint(signal);
      // Untextured, the one colour is the image's mean (baseColorFactor is linear, the image sRGB).
      const [r, g, b] = mean.map(srgbToLinear) as [number, number, number];
      const material = texturePng
        ? { name: 'relief', texturePng, baseColorFactor: [1, 1, 1, 1] as const, roughness: ROUGHNESS }
        : { name: 'relief', baseColorFactor: [r, g, b, 1] as const, roughness: ROUGHNESS };
      const glb = encodeGlb(mesh, material, GENERATOR);
      const look = textured ? { texture: image, colour: [255, 255, 255] as const } : { colour: mean };
      const preview = await renderMeshPreview(mesh, look, PREVIEW_SIZE, signal);
      await writeFile(join(outDir, MODEL_GLB.name), glb, { signal });
      await sharp(preview.data, { raw: { width: preview.width, height: preview.height, channels: 3 } }).png().toFile(join(outDir, PREVIEW_PNG.name));
      return { outputs: [MODEL_GLB, PREVIEW_PNG], preview: PREVIEW_PNG };
    },
  };
};

/** The image's luminance at the grid's vertices, stretched to 0..1 so a dim photo still has depth. */
async function heightField(image: RawImage, grid: { cols: number; rows: number }): Promise<HeightField> {
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(grid.cols + 1, grid.rows + 1, { fit: 'fill', kernel: 'cubic' })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`height field decoded to ${info.channels} channels, expected 1`);
  let [lo, hi] = [255, 0];
  for (const g of data) [lo, hi] = [Math.min(lo, g), Math.max(hi, g)];
  const range = hi - lo;
  const heights = Float32Array.from(data, (g) => (range === 0 ? 0 : (g - lo) / range));
  return { cols: grid.cols, rows: grid.rows, heights };
}

/**
 * The texture as a square power-of-two PNG (the UVs span 0..1, so stretching maps it back):
 * mipmapped sampling needs power-of-two sizes on WebGL 1 viewers.
 */
async function squareTexture(image: RawImage): Promise<Buffer> {
  let side = 64;
  while (side < Math.max(image.width, image.height) && side < IMAGE_EDGE) side *= 2;
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(side, side, { fit: 'fill' })
    .png()
    .toBuffer();
}

