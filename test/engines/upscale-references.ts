import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import type { RawImage } from '../../src/engines/local/image/pixels.js';

/**
 * Reference images for measuring the enhancers' upscaler (test/engines/neural-upscale.test.ts and
 * bench/upscale-quality.bench.ts): each is shrunk with lanczos3 and enlarged back, and the result
 * compared with the reference in PSNR over its RGB bytes.
 *
 * Drawings are made here (SVG). Photographs are 256 x 256 crops of three photographs that
 * scikit-image ships as sample data (fixtures/photos/README.md names each one's source and
 * licence: public domain or CC0).
 */

export async function raw(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Drawn on a 96 x 96 canvas, rendered at 384 x 384. */
export const DRAWING_SIZE = 384;

const svg = (body: string) =>
  sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${DRAWING_SIZE}" height="${DRAWING_SIZE}" viewBox="0 0 96 96">${body}</svg>`));

export const DRAWINGS: Readonly<Record<string, () => Sharp>> = {
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

export const PHOTOS = ['astronaut', 'chelsea', 'coffee'] as const;
export type PhotoName = (typeof PHOTOS)[number];

/** A photograph's 256 x 256 crop. */
export async function photo(name: PhotoName): Promise<Sharp> {
  return sharp(await readFile(new URL(`fixtures/photos/${name}.png`, import.meta.url)));
}

/** `reference` shrunk `scale` times with lanczos3: what the upscaler is given. */
export async function shrunk(reference: RawImage, scale: number): Promise<RawImage> {
  const { width, height } = reference;
  return raw(sharp(reference.data, { raw: { width, height, channels: 3 } }).resize(Math.round(width / scale), Math.round(height / scale), { kernel: 'lanczos3' }));
}

/** `img` enlarged to `width` x `height` with lanczos3 alone: the baseline. */
export function lanczos(img: RawImage, width: number, height: number): Promise<RawImage> {
  return raw(sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } }).resize(width, height, { kernel: 'lanczos3' }));
}

/** Peak signal-to-noise ratio of `b` against `a` over their RGB bytes, in dB. */
export function psnr(a: RawImage, b: RawImage): number {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`psnr of ${a.width} x ${a.height} against ${b.width} x ${b.height}`);
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += (a.data[i]! - b.data[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / (sum / a.data.length));
}
