import { setImmediate } from 'node:timers/promises';
import type { EsrganScale } from './esrgan.js';
import type { RawImage } from './pixels.js';

/**
 * The enhancers' neural upscale (docs/engine.md, "The neural upscaler"): when the picture is drawn
 * larger than it is, ESRGAN enlarges it by the smallest scale it has weights for that reaches the
 * drawn size (x2, x3, x4, x8; beyond x8, x8), and lanczos3 then resizes that to the exact frame.
 * Beyond NEURAL_MAX_OUTPUT_MP (or NEURAL_MAX_MODEL_MP from the network), or when the estimated time does not fit before the job's deadline,
 * lanczos3 alone does it (the path every enhancer took before).
 */

/** Largest output (width x height of the request) upscaled by the network, in megapixels. */
export const NEURAL_MAX_OUTPUT_MP = 4;
/**
 * Largest output of the network itself: x8 for an enlargement just over 4 at the output limit
 * (a long picture cropped to fill a square could otherwise run the network on what is cut away).
 */
export const NEURAL_MAX_MODEL_MP = 16;

/**
 * Seconds per megapixel of the network's own output on one wasm thread, measured on the 2-core
 * machine (`npm run bench`, docs/benchmarks.md) and rounded up: the plan's estimate, not a limit.
 */
export const SECONDS_PER_MODEL_MP: Readonly<Record<EsrganScale, number>> = { 2: 14, 3: 7, 4: 5, 8: 4 };

/** Input pixels of a tile's own square, and of the context around it that the network sees. */
export const TILE = 64;
export const TILE_PAD = 8;

export interface NeuralPlan {
  readonly scale: EsrganScale;
  /** The network's output size. */
  readonly width: number;
  readonly height: number;
  readonly estimatedSeconds: number;
}

/**
 * Whether and how to upscale `src` with the network for an output of `outW` x `outH` where the
 * picture is drawn `factor` times its size; undefined means lanczos3 alone.
 */
export function planNeural(src: { width: number; height: number }, outW: number, outH: number, factor: number, secondsLeft: number): NeuralPlan | undefined {
  if (!(factor > 1) || outW * outH > NEURAL_MAX_OUTPUT_MP * 1e6) return undefined;
  const scale = ([2, 3, 4, 8] as const).find((s) => s >= factor - 1e-9) ?? 8;
  const [width, height] = [src.width * scale, src.height * scale];
  if (width * height > NEURAL_MAX_MODEL_MP * 1e6) return undefined;
  const estimatedSeconds = ((width * height) / 1e6) * SECONDS_PER_MODEL_MP[scale];
  // Half the time left at most: the rest of the render and a loaded machine need the other half.
  if (estimatedSeconds > secondsLeft / 2) return undefined;
  return { scale, width, height, estimatedSeconds };
}

export type TileUpscaler = (rgb: Uint8Array, width: number, height: number) => Promise<Uint8Array>;

/**
 * `img` enlarged `scale` times by `upscaleTile`, tile by tile: each TILE square is run with
 * TILE_PAD pixels of the picture around it (fewer at the picture's edges) and only its own square
 * of the result is kept. The context is wider than the network's receptive field, so every output
 * pixel is what the whole picture in one run would give: no seams. The signal is checked and the
 * event loop let run (heartbeats, cancel) between tiles; `onTile` reports the fraction done.
 */
export async function upscaleTiled(img: RawImage, scale: number, upscaleTile: TileUpscaler, signal: AbortSignal, onTile?: (done: number) => void): Promise<RawImage> {
  const [W, H] = [img.width * scale, img.height * scale];
  const out = Buffer.alloc(W * H * 3);
  const across = Math.ceil(img.width / TILE);
  const total = across * Math.ceil(img.height / TILE);
  let done = 0;
  for (let ty = 0; ty < img.height; ty += TILE) {
    for (let tx = 0; tx < img.width; tx += TILE) {
      signal.throwIfAborted();
      const [x1, y1] = [Math.min(img.width, tx + TILE), Math.min(img.height, ty + TILE)];
      const [px0, py0] = [Math.max(0, tx - TILE_PAD), Math.max(0, ty - TILE_PAD)];
      const [px1, py1] = [Math.min(img.width, x1 + TILE_PAD), Math.min(img.height, y1 + TILE_PAD)];
      const [pw, ph] = [px1 - px0, py1 - py0];
      const tile = new Uint8Array(pw * ph * 3);
      for (let y = 0; y < ph; y++) tile.set(img.data.subarray(((py0 + y) * img.width + px0) * 3, ((py0 + y) * img.width + px1) * 3), y * pw * 3);
      const big = await upscaleTile(tile, pw, ph);
      const rowBytes = (x1 - tx) * scale * 3;
      for (let y = (ty - py0) * scale; y < (y1 - py0) * scale; y++) {
        const from = (y * pw * scale + (tx - px0) * scale) * 3;
        out.set(big.subarray(from, from + rowBytes), ((py0 * scale + y) * W + tx * scale) * 3);
      }
      onTile?.(++done / total);
      await setImmediate();
    }
  }
  signal.throwIfAborted();
  return { data: out, width: W, height: H };
}

/** `img` upscaled by the network per `plan` (TensorFlow.js loaded on first use). */
export async function neuralUpscale(img: RawImage, plan: NeuralPlan, signal: AbortSignal, onTile?: (done: number) => void): Promise<RawImage> {
  const { esrgan } = await import('./esrgan.js');
  const model = await esrgan(plan.scale);
  signal.throwIfAborted();
  return upscaleTiled(img, plan.scale, (rgb, w, h) => model.upscale(rgb, w, h), signal, onTile);
}
