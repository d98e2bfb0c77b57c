import sharp from 'sharp';
import type { Sharp } from 'sharp';
import { EngineError } from '../engine.js';
import type { EngineContext } from '../engine.js';
import { meanColour } from './pixels.js';
import type { RawImage } from './pixels.js';
import type { Rgb } from './scene-svg.js';

/**
 * Input images, fetched through the context and decoded here: a fetched file that sharp cannot
 * fully decode ends the job as `input_invalid`, naming the request field.
 */

/**
 * Raster formats only. An SVG or PDF input could ask its renderer to load other resources, and
 * nothing the local engine does needs one.
 */
const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'heif']);

type Loader = Pick<EngineContext, 'loadInput'>;

async function decode<T>(
  ctx: Loader,
  url: string,
  field: string,
  use: (image: Sharp) => Promise<T>,
): Promise<T> {
  const bytes = await ctx.loadInput(url, field);
  try {
    const { format } = await sharp(bytes).metadata();
    if (!format || !ACCEPTED_FORMATS.has(format)) {
      throw new Error(`format ${format ?? 'unknown'} is not accepted (use JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF)`);
    }
    // `rotate()` applies the EXIF orientation; flattening drops alpha onto white, as a viewer shows it.
    return await use(sharp(bytes).rotate().flatten({ background: '#ffffff' }).toColourspace('srgb'));
  } catch (err) {
    throw new EngineError('input_invalid', `${field} is not a usable image: ${(err as Error).message}`);
  }
}

async function toRaw(image: Sharp): Promise<RawImage> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels, expected 3`);
  return { data, width: info.width, height: info.height };
}

/** The image resized to cover exactly `width` x `height`, centred. */
export function loadImageCover(ctx: Loader, url: string, field: string, width: number, height: number): Promise<RawImage> {
  return decode(ctx, url, field, (img) => toRaw(img.resize(width, height, { fit: 'cover' })));
}

/**
 * The image reduced to a few pixels and brought back to `width` x `height`: its colours and their
 * layout without its detail, a cheap heavy blur.
 */
export async function loadImageSoft(
  ctx: Loader,
  url: string,
  field: string,
  width: number,
  height: number,
): Promise<RawImage> {
  const scale = 24 / Math.max(width, height);
  const [w, h] = [Math.max(2, Math.round(width * scale)), Math.max(2, Math.round(height * scale))];
  const small = await decode(ctx, url, field, (img) => toRaw(img.resize(w, h, { fit: 'cover' })));
  const raw = { width: small.width, height: small.height, channels: 3 as const };
  return toRaw(sharp(small.data, { raw }).resize(width, height, { kernel: 'cubic' }));
}

/** The image covering `width` x `height`, written as a PNG file for ffmpeg. */
export function loadImageFile(
  ctx: Loader,
  url: string,
  field: string,
  width: number,
  height: number,
  path: string,
): Promise<void> {
  return decode(ctx, url, field, async (img) => {
    await img.resize(width, height, { fit: 'cover' }).png().toFile(path);
  });
}

/** The image's mean colour. */
export async function loadImageMean(ctx: Loader, url: string, field: string): Promise<Rgb> {
  return meanColour(await decode(ctx, url, field, (img) => toRaw(img.resize(64, 64, { fit: 'fill' }))));
}
