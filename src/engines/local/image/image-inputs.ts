import sharp from 'sharp';
import type { Sharp, SharpOptions } from 'sharp';
import { EngineError } from '../../engine.js';
import { claimFailure, readImageHeader } from '../../media/media-claims.js';
import { notAnImage, sniffImage } from '../../media/media-types.js';
import { meanColour } from './pixels.js';
import type { RawImage } from './pixels.js';
import type { RenderEnv } from '../render-types.js';
import type { Rgb } from './scene-svg.js';

/**
 * Input images, fetched through the context and decoded here. Raster formats only (JPEG, PNG,
 * WebP, GIF, TIFF, AVIF, HEIF), known by their first bytes before sharp sees them: an SVG or PDF
 * could ask its renderer to load other resources, and nothing the local engine does needs one.
 * sharp reads only the Buffer it is given. The pixel size in the header is checked against
 * `limits.imagePixels` before decoding (and libvips enforces the same limit while decoding), so a
 * small file claiming a huge image fails at once as `input_too_large`.
 */

type Loader = Pick<RenderEnv, 'ctx' | 'limits'>;

async function decode<T>(env: Loader, url: string, field: string, use: (image: Sharp) => Promise<T>): Promise<T> {
  const bytes = await env.ctx.loadInput(url, field);
  const sniffed = sniffImage(bytes);
  if (!sniffed.ok) throw new EngineError('input_invalid', notAnImage(field, sniffed.what));
  const unusable = (why: string, err?: unknown) =>
    new EngineError('input_invalid', `${field} is not a usable image: ${why}`, err ? { detail: (err as Error).message } : {});
  try {
    await readImageHeader(bytes, sniffed.type, env.limits);
  } catch (err) {
    throw claimFailure(field, 'image', err);
  }

  const options: SharpOptions = { limitInputPixels: env.limits.imagePixels, sequentialRead: true };
  try {
    // `rotate()` applies the EXIF orientation; flattening drops alpha onto white, as a viewer shows it.
    return await use(sharp(bytes, options).rotate().flatten({ background: '#ffffff' }).toColourspace('srgb'));
  } catch (err) {
    throw unusable('it cannot be decoded (damaged or truncated?)', err);
  }
}

async function toRaw(image: Sharp): Promise<RawImage> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels, expected 3`);
  return { data, width: info.width, height: info.height };
}

/** The image at its own size (at most `limits.imagePixels`), for filters that work on its pixels as they are. */
export function loadImageRaw(env: Loader, url: string, field: string): Promise<RawImage> {
  return decode(env, url, field, toRaw);
}

/** The image resized to cover exactly `width` x `height`, centred. */
export function loadImageCover(env: Loader, url: string, field: string, width: number, height: number): Promise<RawImage> {
  return decode(env, url, field, (img) => toRaw(img.resize(width, height, { fit: 'cover' })));
}

/**
 * The image reduced to a few pixels and brought back to `width` x `height`: its colours and their
 * layout without its detail, a cheap heavy blur.
 */
export async function loadImageSoft(
  env: Loader,
  url: string,
  field: string,
  width: number,
  height: number,
): Promise<RawImage> {
  const scale = 24 / Math.max(width, height);
  const [w, h] = [Math.max(2, Math.round(width * scale)), Math.max(2, Math.round(height * scale))];
  const small = await decode(env, url, field, (img) => toRaw(img.resize(w, h, { fit: 'cover' })));
  const raw = { width: small.width, height: small.height, channels: 3 as const };
  return toRaw(sharp(small.data, { raw }).resize(width, height, { kernel: 'cubic' }));
}

/** The image covering `width` x `height`, written as a PNG file for ffmpeg. */
export function loadImageFile(
  env: Loader,
  url: string,
  field: string,
  width: number,
  height: number,
  path: string,
): Promise<void> {
  return decode(env, url, field, async (img) => {
    await img.resize(width, height, { fit: 'cover' }).png().toFile(path);
  });
}

/** The image's mean colour. */
export async function loadImageMean(env: Loader, url: string, field: string): Promise<Rgb> {
  return meanColour(await decode(env, url, field, (img) => toRaw(img.resize(64, 64, { fit: 'fill' }))));
}

/** The image at its own aspect ratio, within `maxEdge` x `maxEdge` (never enlarged). */
export function loadImageInside(env: Loader, url: string, field: string, maxEdge: number): Promise<RawImage> {
  return decode(env, url, field, (img) => toRaw(img.resize(maxEdge, maxEdge, { fit: 'inside', withoutEnlargement: true })));
}
