import { setImmediate as nextTurn } from 'node:timers/promises';
import { addGrain } from '../image/enhance-filters.js';
import { clamp255, lumaOf, toByte } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';
import type { Prng } from '../seed.js';
import type { AppliedStyle, Style } from './style-artifact.js';
import { ANALYSIS_EDGE, boxBlur, cdfMid, chromaOf, curveAt, downsample, textureOf } from './style-stats.js';

/**
 * Moving a picture toward (or away from) trained styles. Each style, in request order, acts in
 * four steps, each measured against the picture as it is at that point: the tone curve
 * (histogram matching of luminance, which brings the style's brightness and contrast), saturation,
 * a pull of every colour toward the palette, then texture (detail and grain). Each step moves a
 * share `t` of the way from the picture's own statistic to the style's: `t` is strength / 2 times
 * the style's influence for that step, so strength 2 matches the style, 1 goes halfway, and a
 * negative strength moves as far the other way. A strength of 0 leaves the bytes untouched.
 */

/** At strength 2 a colour moves this share of the way to its palette colour. */
const PALETTE_PULL = 0.75;
/** How far (RGB distance) a palette colour reaches: nearer colours attract much more. */
const PALETTE_REACH = 40;
/** Minor palette colours still attract a little. */
const MIN_COLOUR_WEIGHT = 0.02;
const [MIN_DETAIL_GAIN, MAX_DETAIL_GAIN] = [0.5, 2.5];
const MAX_SATURATION_GAIN = 4;

export async function applyStyles(
  img: RawImage,
  styles: readonly AppliedStyle[],
  prng: Prng,
  signal: AbortSignal,
): Promise<RawImage> {
  let out = img;
  for (const [k, { style, strength }] of styles.entries()) {
    if (strength === 0) continue;
    out = await applyOne(out, style, strength / 2, prng.fork(`style:${k}`), signal);
  }
  return out;
}

async function applyOne(img: RawImage, style: Style, t: number, prng: Prng, signal: AbortSignal): Promise<RawImage> {
  const { width, height } = img;
  const px = Float32Array.from(img.data);
  const { influence } = style;
  const steps = [
    () => toneToward(px, style.tone, t * influence.tone),
    () => saturationToward(px, style.saturation, t * influence.colour),
    () => paletteToward(px, style, t * influence.palette),
  ];
  for (const step of steps) {
    signal.throwIfAborted();
    step();
    await nextTurn();
  }
  const shaped = { data: toBytes(px), width, height };
  const before = downsample(shaped, ANALYSIS_EDGE);
  const own = textureOf(before.image);
  const tt = t * influence.texture;
  const detailed = detailToward(shaped, own.detail, style.texture.detail, tt, before.factor);
  // Grain is only ever added: a picture moves toward a grainier style, or away from a smoother one.
  // Noise measured on a copy reduced `factor` times is `factor` times weaker than at full size.
  const grain = tt * (style.texture.grain - own.grain) * before.factor;
  await addGrain(detailed, grain, prng, signal);
  return detailed;
}

function toBytes(px: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(px.length);
  for (let i = 0; i < px.length; i++) out[i] = toByte(px[i]!);
  return out;
}

function luma(px: Float32Array, i: number): number {
  return lumaOf(px[i]!, px[i + 1]!, px[i + 2]!);
}

/** Histogram matching, partial: each level moves a share `t` toward the style's level of the same rank. */
function toneToward(px: Float32Array, tone: readonly number[], t: number): void {
  if (t === 0) return;
  const hist = new Float64Array(256);
  for (let i = 0; i < px.length; i += 3) hist[Math.round(clamp255(luma(px, i)))]! += 1;
  const cdf = cdfMid(hist);
  const shift = new Float32Array(256);
  for (let v = 0; v < 256; v++) shift[v] = t * (curveAt(tone, cdf[v]!) - v);
  for (let i = 0; i < px.length; i += 3) {
    const y = clamp255(luma(px, i));
    const lo = Math.floor(y);
    const hi = Math.min(255, lo + 1);
    const d = shift[lo]! + (shift[hi]! - shift[lo]!) * (y - lo);
    for (let c = 0; c < 3; c++) px[i + c] = clamp255(px[i + c]! + d);
  }
}

/** Colours spread from their grey by a factor that takes mean chroma a share `t` of the way (geometrically). */
function saturationToward(px: Float32Array, target: number, t: number): void {
  const own = chromaOf(px);
  if (t === 0 || own < 0.005) return;
  const gain = Math.min(MAX_SATURATION_GAIN, Math.max(0, (Math.max(target, 0.01) / own) ** t));
  for (let i = 0; i < px.length; i += 3) {
    const y = luma(px, i);
    for (let c = 0; c < 3; c++) px[i + c] = clamp255(y + gain * (px[i + c]! - y));
  }
}

/**
 * Each colour moves toward a blend of the palette colours near it (weighted by their share and
 * by closeness), so areas take the style's colours while their edges stay where they were.
 */
function paletteToward(px: Float32Array, style: Style, t: number): void {
  const pull = PALETTE_PULL * t;
  if (pull === 0) return;
  const n = style.palette.length;
  const rgb = Float64Array.from(style.palette.flatMap((c) => c.rgb));
  const weight = Float64Array.from(style.palette.map((c) => Math.max(MIN_COLOUR_WEIGHT, c.weight)));
  const dist = new Float64Array(n);
  const spread = 2 * PALETTE_REACH * PALETTE_REACH;
  for (let i = 0; i < px.length; i += 3) {
    const [r, g, b] = [px[i]!, px[i + 1]!, px[i + 2]!];
    let nearest = Infinity;
    for (let k = 0; k < n; k++) {
      const d = (r - rgb[k * 3]!) ** 2 + (g - rgb[k * 3 + 1]!) ** 2 + (b - rgb[k * 3 + 2]!) ** 2;
      dist[k] = d;
      if (d < nearest) nearest = d;
    }
    let [sum, tr, tg, tb] = [0, 0, 0, 0];
    for (let k = 0; k < n; k++) {
      const w = weight[k]! * Math.exp(-(dist[k]! - nearest) / spread);
      sum += w;
      tr += w * rgb[k * 3]!;
      tg += w * rgb[k * 3 + 1]!;
      tb += w * rgb[k * 3 + 2]!;
    }
    px[i] = clamp255(r + pull * (tr / sum - r));
    px[i + 1] = clamp255(g + pull * (tg / sum - g));
    px[i + 2] = clamp255(b + pull * (tb / sum - b));
  }
}

/**
 * Unsharp mask (gain above 1) or softening (below 1) of luminance, its blur as wide as one pixel
 * of the analysis copy, so the detail measured there moves by about the gain.
 */
function detailToward(img: RawImage, own: number, target: number, t: number, factor: number): RawImage {
  const gain = Math.min(MAX_DETAIL_GAIN, Math.max(MIN_DETAIL_GAIN, (Math.max(target, 0.05) / Math.max(own, 0.05)) ** t));
  if (t === 0 || Math.abs(gain - 1) < 1e-3) return img;
  const { data, width, height } = img;
  const y = new Float32Array(width * height);
  for (let p = 0; p < y.length; p++) y[p] = lumaOf(data[p * 3]!, data[p * 3 + 1]!, data[p * 3 + 2]!);
  const blurred = boxBlur(y, width, height, factor);
  const out = Buffer.allocUnsafe(data.length);
  for (let p = 0; p < y.length; p++) {
    const d = (gain - 1) * (y[p]! - blurred[p]!);
    for (let c = 0; c < 3; c++) out[p * 3 + c] = toByte(data[p * 3 + c]! + d);
  }
  return { data: out, width, height };
}
