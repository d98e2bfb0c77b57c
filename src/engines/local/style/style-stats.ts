import { clamp255, lumaOf } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';

/**
 * What a style is made of, measured on pixels: the tone curve (luminance quantiles), colourfulness
 * and texture. Pure arithmetic on raw 8-bit RGB, shared by training (measuring the training
 * images) and application (measuring the picture being styled, the same way, so the two compare).
 * Texture depends on scale, so it is always measured on an image at most ANALYSIS_EDGE pixels on
 * its longer side.
 */

export const ANALYSIS_EDGE = 512;

/** Luminance quantiles at 0, 1/16, ..., 1: the tone curve, 17 points. */
export const TONE_POINTS = 17;

/** 256-bin histogram of rounded luma. */
export function lumaHistogram(img: RawImage): Float64Array {
  const hist = new Float64Array(256);
  const d = img.data;
  for (let i = 0; i < d.length; i += 3) hist[Math.round(lumaOf(d[i]!, d[i + 1]!, d[i + 2]!))]! += 1;
  return hist;
}

function total(hist: Float64Array): number {
  let n = 0;
  for (const v of hist) n += v;
  return n;
}

/**
 * The value below which a fraction `p` of the histogram lies, each bin spread evenly over
 * [v - 0.5, v + 0.5] so quantiles move smoothly rather than in whole levels.
 */
export function quantile(hist: Float64Array, p: number): number {
  const n = total(hist);
  if (n === 0) return 0;
  const target = Math.min(1, Math.max(0, p)) * n;
  let below = 0;
  for (let v = 0; v < 256; v++) {
    const count = hist[v]!;
    if (count > 0 && below + count >= target) return clamp255(v - 0.5 + (target - below) / count);
    below += count;
  }
  return 255;
}

export function toneCurve(hist: Float64Array): number[] {
  return Array.from({ length: TONE_POINTS }, (_, k) => quantile(hist, k / (TONE_POINTS - 1)));
}

/** For each level v, the fraction of the histogram below it (v's own bin counted half). */
export function cdfMid(hist: Float64Array): Float64Array {
  const n = total(hist) || 1;
  const out = new Float64Array(256);
  let below = 0;
  for (let v = 0; v < 256; v++) {
    out[v] = (below + hist[v]! / 2) / n;
    below += hist[v]!;
  }
  return out;
}

/** The tone curve read at fraction p, linearly between its points. */
export function curveAt(curve: readonly number[], p: number): number {
  const x = Math.min(1, Math.max(0, p)) * (curve.length - 1);
  const k = Math.min(curve.length - 2, Math.floor(x));
  return curve[k]! + (curve[k + 1]! - curve[k]!) * (x - k);
}

/** Standard deviation of luma over 255: 0 for a flat image, 0.5 for half black, half white. */
export function contrastOf(hist: Float64Array): number {
  const n = total(hist);
  if (n === 0) return 0;
  let sum = 0;
  let sq = 0;
  for (let v = 0; v < 256; v++) {
    sum += v * hist[v]!;
    sq += v * v * hist[v]!;
  }
  const mean = sum / n;
  return Math.sqrt(Math.max(0, sq / n - mean * mean)) / 255;
}

/** Mean chroma, (max − min) / 255 per pixel: 0 for greys, 1 for pure primaries. */
export function chromaOf(data: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < data.length; i += 3) {
    const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
    sum += Math.max(r, g, b) - Math.min(r, g, b);
  }
  return data.length === 0 ? 0 : sum / (data.length / 3) / 255;
}

export interface Texture {
  /** Mean absolute difference between luma and its 3 x 3 mean, in levels: edge and detail energy. */
  readonly detail: number;
  /** Share of luma variance above that 3 x 3 mean, 0..1: how much of the picture is fine detail. */
  readonly highFrequency: number;
  /** Noise level, in levels: the robust (median-based) spread of that residual, grain on film. */
  readonly grain: number;
}

/** `img` should be at most ANALYSIS_EDGE on its longer side (see `downsample`). */
export function textureOf(img: RawImage): Texture {
  const { width: w, height: h } = img;
  const y = lumaPlane(img);
  const blurred = boxBlur(y, w, h, 1);
  const residualBins = new Float64Array(256 * 4);
  let absSum = 0;
  let resSq = 0;
  let sum = 0;
  let sq = 0;
  for (let i = 0; i < y.length; i++) {
    const r = y[i]! - blurred[i]!;
    absSum += Math.abs(r);
    resSq += r * r;
    sum += y[i]!;
    sq += y[i]! * y[i]!;
    residualBins[Math.min(residualBins.length - 1, Math.floor(Math.abs(r) * 4))]! += 1;
  }
  const n = y.length || 1;
  const variance = sq / n - (sum / n) ** 2;
  const medianAbs = quantileOfBins(residualBins, 0.5) / 4;
  return {
    detail: absSum / n,
    highFrequency: variance > 1e-6 ? Math.min(1, resSq / n / variance) : 0,
    // 1.4826 × median |x| estimates the standard deviation of Gaussian noise, ignoring the edges.
    grain: 1.4826 * medianAbs,
  };
}

function quantileOfBins(bins: Float64Array, p: number): number {
  const n = total(bins);
  let below = 0;
  for (let k = 0; k < bins.length; k++) {
    if (below + bins[k]! >= p * n && bins[k]! > 0) return k + (p * n - below) / bins[k]!;
    below += bins[k]!;
  }
  return bins.length;
}

export function lumaPlane(img: RawImage): Float32Array {
  const out = new Float32Array(img.width * img.height);
  const d = img.data;
  for (let p = 0, i = 0; p < out.length; p++, i += 3) out[p] = lumaOf(d[i]!, d[i + 1]!, d[i + 2]!);
  return out;
}

/** Mean over a (2r + 1)² square, edges clamped; separable running sums, so any radius costs the same. */
export function boxBlur(plane: Float32Array, w: number, h: number, r: number): Float32Array {
  const tmp = new Float32Array(plane.length);
  const out = new Float32Array(plane.length);
  const size = 2 * r + 1;
  for (let y = 0; y < h; y++) runningMean(plane, tmp, y * w, 1, w, r, size);
  for (let x = 0; x < w; x++) runningMean(tmp, out, x, w, h, r, size);
  return out;
}

function runningMean(src: Float32Array, dst: Float32Array, start: number, step: number, n: number, r: number, size: number): void {
  const at = (k: number) => src[start + Math.min(n - 1, Math.max(0, k)) * step]!;
  let acc = 0;
  for (let k = -r; k <= r; k++) acc += at(k);
  for (let k = 0; k < n; k++) {
    dst[start + k * step] = acc / size;
    acc += at(k + r + 1) - at(k - r);
  }
}

/**
 * The image reduced by a whole factor (box average) until its longer side is at most `maxEdge`;
 * itself when already small enough. Returns the factor used.
 */
export function downsample(img: RawImage, maxEdge: number): { image: RawImage; factor: number } {
  const factor = Math.max(1, Math.ceil(Math.max(img.width, img.height) / maxEdge));
  if (factor === 1) return { image: img, factor };
  const w = Math.max(1, Math.floor(img.width / factor));
  const h = Math.max(1, Math.floor(img.height / factor));
  const out = Buffer.alloc(w * h * 3);
  const area = factor * factor;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < 3; c++) {
        let s = 0;
        for (let dy = 0; dy < factor; dy++) {
          const row = ((y * factor + dy) * img.width + x * factor) * 3 + c;
          for (let dx = 0; dx < factor; dx++) s += img.data[row + dx * 3]!;
        }
        out[(y * w + x) * 3 + c] = Math.round(s / area);
      }
    }
  }
  return { image: { data: out, width: w, height: h }, factor };
}
