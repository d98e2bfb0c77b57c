import { lumaOf } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';

/**
 * A style's dominant colours: median cut over pixels sampled from every training image (each image
 * gives the same number of samples, so a large image does not outvote a small one), refined by
 * k-means. Pure and deterministic: fixed sampling strides, no randomness, ties broken by order.
 */

export interface PaletteColour {
  readonly rgb: readonly [number, number, number];
  /** Share of the sampled pixels nearest this colour; the weights of a palette sum to 1. */
  readonly weight: number;
}

/** Samples taken from all the training images together. */
export const PALETTE_SAMPLES = 12_000;

/** Every `step`-th pixel of each image, `perImage` at most, as RGB triples. */
export function samplePixels(images: readonly RawImage[], total = PALETTE_SAMPLES): Float32Array {
  const perImage = Math.max(1, Math.floor(total / Math.max(1, images.length)));
  const parts: number[] = [];
  for (const img of images) {
    const pixels = img.width * img.height;
    const step = Math.max(1, Math.floor(pixels / perImage));
    for (let p = 0, taken = 0; p < pixels && taken < perImage; p += step, taken++) {
      parts.push(img.data[p * 3]!, img.data[p * 3 + 1]!, img.data[p * 3 + 2]!);
    }
  }
  return Float32Array.from(parts);
}

interface Box {
  readonly indices: number[];
}

/** A channel's spread in a box: count × variance, the squared error a split along it can remove. */
function channelError(samples: Float32Array, box: Box, c: number): number {
  let sum = 0;
  let sq = 0;
  for (const i of box.indices) {
    const v = samples[i * 3 + c]!;
    sum += v;
    sq += v * v;
  }
  return sq - (sum * sum) / box.indices.length;
}

/**
 * Median cut, splitting each time the box and channel with the largest squared error at that
 * channel's median, k − 1 times. By error rather than range, so a few anti-aliased edge pixels
 * do not win a colour of their own over a large area of two colours.
 */
function medianCut(samples: Float32Array, k: number): number[][] {
  const n = samples.length / 3;
  const boxes: Box[] = [{ indices: Array.from({ length: n }, (_, i) => i) }];
  while (boxes.length < k) {
    let best = -1;
    let bestChannel = 0;
    let bestError = 1e-6;
    boxes.forEach((box, b) => {
      for (let c = 0; c < 3; c++) {
        const error = channelError(samples, box, c);
        if (error > bestError && box.indices.length > 1) [best, bestChannel, bestError] = [b, c, error];
      }
    });
    if (best < 0) break;
    const sorted = [...boxes[best]!.indices].sort((a, b) => samples[a * 3 + bestChannel]! - samples[b * 3 + bestChannel]! || a - b);
    const half = Math.floor(sorted.length / 2);
    boxes.splice(best, 1, { indices: sorted.slice(0, half) }, { indices: sorted.slice(half) });
  }
  return boxes.map((box) => {
    const mean = [0, 0, 0];
    for (const i of box.indices) for (let c = 0; c < 3; c++) mean[c]! += samples[i * 3 + c]!;
    return mean.map((s) => s / box.indices.length);
  });
}

function nearest(samples: Float32Array, i: number, centres: readonly number[][]): number {
  let best = 0;
  let bestDist = Infinity;
  centres.forEach((centre, k) => {
    const d =
      (samples[i * 3]! - centre[0]!) ** 2 + (samples[i * 3 + 1]! - centre[1]!) ** 2 + (samples[i * 3 + 2]! - centre[2]!) ** 2;
    if (d < bestDist) [best, bestDist] = [k, d];
  });
  return best;
}

export interface PaletteFit {
  readonly colours: PaletteColour[];
  /** k-means rounds actually run (it stops early once no sample changes colour). */
  readonly iterations: number;
}

/**
 * `k` colours at most (fewer when the samples hold fewer distinct ones), refined by up to
 * `maxIterations` rounds of k-means; ordered by weight, heaviest first.
 */
export function fitPalette(samples: Float32Array, k: number, maxIterations: number): PaletteFit {
  const n = samples.length / 3;
  if (n === 0) return { colours: [], iterations: 0 };
  let centres = medianCut(samples, k);
  const assignment = new Int32Array(n).fill(-1);
  let iterations = 0;
  for (let round = 0; round <= maxIterations; round++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const k2 = nearest(samples, i, centres);
      if (k2 !== assignment[i]) [assignment[i], changed] = [k2, changed + 1];
    }
    if (round === maxIterations || (changed === 0 && round > 0)) break;
    iterations++;
    const sums = centres.map(() => [0, 0, 0, 0]);
    for (let i = 0; i < n; i++) {
      const s = sums[assignment[i]!]!;
      for (let c = 0; c < 3; c++) s[c]! += samples[i * 3 + c]!;
      s[3]! += 1;
    }
    // An emptied cluster keeps its centre; the next assignment may fill it again.
    centres = centres.map((centre, j) => (sums[j]![3]! > 0 ? [0, 1, 2].map((c) => sums[j]![c]! / sums[j]![3]!) : centre));
  }
  const counts = new Float64Array(centres.length);
  for (let i = 0; i < n; i++) counts[assignment[i]!]! += 1;
  const clusters = centres.map((centre, j) => ({ centre, count: counts[j]! })).filter((c) => c.count > 0);
  const merged = foldSmall(mergeClose(clusters), n * MIN_SHARE);
  const colours = merged
    .map(({ centre, count }) => ({ rgb: centre.map((v) => Math.round(v)) as unknown as [number, number, number], weight: count / n }))
    .sort((a, b) => b.weight - a.weight || lumaOf(...a.rgb) - lumaOf(...b.rgb));
  return { colours, iterations };
}

/** A colour covering less than this share of the samples (edge pixels, specks) is folded into its nearest. */
const MIN_SHARE = 0.01;

function distance(a: readonly number[], b: readonly number[]): number {
  return Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
}

function combine(x: Cluster, y: Cluster): Cluster {
  const count = x.count + y.count;
  return { centre: [0, 1, 2].map((c) => (x.centre[c]! * x.count + y.centre[c]! * y.count) / count), count };
}

function foldSmall(clusters: Cluster[], minCount: number): Cluster[] {
  const big = clusters.filter((c) => c.count >= minCount);
  if (big.length === 0) return clusters;
  for (const small of clusters.filter((c) => c.count < minCount)) {
    let at = 0;
    big.forEach((c, k) => {
      if (distance(c.centre, small.centre) < distance(big[at]!.centre, small.centre)) at = k;
    });
    // The count joins the nearest colour; its centre stays, so a speck does not tint it.
    big[at] = { centre: big[at]!.centre, count: big[at]!.count + small.count };
  }
  return big;
}

/** Colours closer than this (RGB distance) are one colour to the eye; a smooth gradient would give several. */
const MERGE_DISTANCE = 12;

interface Cluster {
  readonly centre: number[];
  readonly count: number;
}

function mergeClose(clusters: Cluster[]): Cluster[] {
  const out = [...clusters];
  for (let a = 0; a < out.length; a++) {
    for (let b = a + 1; b < out.length; b++) {
      if (distance(out[a]!.centre, out[b]!.centre) >= MERGE_DISTANCE) continue;
      out[a] = combine(out[a]!, out[b]!);
      out.splice(b, 1);
      // The merged centre moved: compare it with every other colour again.
      b = a;
    }
  }
  return out;
}
