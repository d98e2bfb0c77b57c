import type { Rgb } from './scene-svg.js';

/** Rec. 601 luma weights (R, G, B): the one luminance of the local engine. */
export const LUMA_WEIGHTS: readonly [number, number, number] = Object.freeze([0.299, 0.587, 0.114]) as readonly [number, number, number];

export function lumaOf(r: number, g: number, b: number): number {
  return LUMA_WEIGHTS[0] * r + LUMA_WEIGHTS[1] * g + LUMA_WEIGHTS[2] * b;
}

/** A channel value held to 0..255 (not rounded). */
export function clamp255(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/** A channel value as a byte: held to 0..255 and rounded. */
export const toByte = (v: number): number => Math.round(clamp255(v));

/** An 8-bit RGB image in memory, three bytes a pixel, no padding; what sharp's `raw()` gives. */
export interface RawImage {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

/**
 * `base * (1 - weight) + over * weight`, per channel: the one blend behind image-to-image
 * strength, style references and tints. `over` is an image of the same size or a flat colour.
 */
export function mix(base: RawImage, over: RawImage | Rgb, weight: number): RawImage {
  const w = Math.min(1, Math.max(0, weight));
  if (w === 0) return base;
  if (w === 1 && !isRgb(over)) return over;
  const out = Buffer.allocUnsafe(base.data.length);
  const a = base.data;
  if (isRgb(over)) {
    for (let i = 0; i < a.length; i++) out[i] = Math.round(a[i]! * (1 - w) + over[i % 3]! * w);
  } else {
    if (over.width !== base.width || over.height !== base.height) throw new Error('mix: sizes differ');
    const b = over.data;
    for (let i = 0; i < a.length; i++) out[i] = Math.round(a[i]! * (1 - w) + b[i]! * w);
  }
  return { data: out, width: base.width, height: base.height };
}

function isRgb(v: RawImage | Rgb): v is Rgb {
  return Array.isArray(v);
}

export function meanColour(img: RawImage): Rgb {
  const sum = [0, 0, 0];
  for (let i = 0; i < img.data.length; i++) sum[i % 3]! += img.data[i]!;
  const count = img.width * img.height;
  return [sum[0]! / count, sum[1]! / count, sum[2]! / count];
}
