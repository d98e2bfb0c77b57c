import { setImmediate } from 'node:timers/promises';
import type { EsrganScale, EsrganSize } from './esrgan.js';
import type { RawImage } from './pixels.js';

/**
 * The enhancers' neural upscale (docs/engine.md, "The neural upscaler"): when the picture is drawn
 * larger than it is, ESRGAN enlarges it by the smallest scale it has weights for that reaches the
 * drawn size (x2, x3, x4, x8; beyond x8, x8), with the generator NETWORKS names for that scale,
 * and lanczos3 then resizes that to the exact frame. Beyond NEURAL_MAX_OUTPUT_MP (or
 * NEURAL_MAX_MODEL_MP from the network), or when the estimated time does not fit before the job's
 * deadline, lanczos3 alone does it, and the plan says why.
 */

/** Largest output (width x height of the request) upscaled by the network, in megapixels. */
export const NEURAL_MAX_OUTPUT_MP = 4;
/**
 * Largest output of the network itself: x8 for an enlargement just over 4 at the output limit
 * (a long picture cropped to fill a square could otherwise run the network on what is cut away).
 */
export const NEURAL_MAX_MODEL_MP = 16;

export interface NetworkChoice {
  readonly size: EsrganSize;
  /**
   * CPU seconds per megapixel of the network's own output on one wasm thread, measured on the
   * 2-core machine (`npm run bench:upscale-quality`, docs/benchmarks.md) and rounded up: the
   * plan's estimate, not a limit.
   */
  readonly secondsPerMp: number;
}

/**
 * The generators each scale runs, best first (docs/decisions.md, "Which ESRGAN at which scale"):
 * the first whose estimate fits before the job's deadline runs. x4 is thick, the one generator
 * that beats lanczos3 by 0.5 dB PSNR at x4 on photographs and drawings alike (slim: +0.39 dB on
 * photographs), with slim behind it for the pictures thick has no time for; at x2 slim already
 * gains 2.4 dB, and medium adds 0.2 dB for 2.8 times the time. x3 and x8 keep slim.
 */
export const NETWORKS: Readonly<Record<EsrganScale, readonly NetworkChoice[]>> = {
  2: [{ size: 'slim', secondsPerMp: 14 }],
  3: [{ size: 'slim', secondsPerMp: 7 }],
  4: [
    { size: 'thick', secondsPerMp: 60 },
    { size: 'slim', secondsPerMp: 5 },
  ],
  8: [{ size: 'slim', secondsPerMp: 4 }],
};

/** Input pixels of a tile's own square, and of the context around it that the network sees. */
export const TILE = 64;
export const TILE_PAD = 8;

export interface NeuralPlan {
  readonly upscaler: 'network';
  readonly network: EsrganSize;
  readonly scale: EsrganScale;
  /** The network's output size. */
  readonly width: number;
  readonly height: number;
  readonly estimatedSeconds: number;
}

export interface LanczosPlan {
  readonly upscaler: 'lanczos3';
  /** Why not the network, in words a client may read. */
  readonly reason: string;
}

export type UpscalePlan = NeuralPlan | LanczosPlan;

const lanczos3 = (reason: string): LanczosPlan => ({ upscaler: 'lanczos3', reason });

/**
 * How to upscale `src` for an output of `outW` x `outH` where the picture is drawn `factor`
 * times its size: with the network, or with lanczos3 alone and why.
 */
export function planNeural(src: { width: number; height: number }, outW: number, outH: number, factor: number, secondsLeft: number): UpscalePlan {
  if (!(factor > 1)) return lanczos3('the picture is not enlarged');
  if (outW * outH > NEURAL_MAX_OUTPUT_MP * 1e6) return lanczos3(`the output is larger than ${NEURAL_MAX_OUTPUT_MP} megapixels`);
  const scale = ([2, 3, 4, 8] as const).find((s) => s >= factor - 1e-9) ?? 8;
  const [width, height] = [src.width * scale, src.height * scale];
  if (width * height > NEURAL_MAX_MODEL_MP * 1e6) return lanczos3(`the network's own output would be larger than ${NEURAL_MAX_MODEL_MP} megapixels`);
  const mp = (width * height) / 1e6;
  // Half the time left at most: the rest of the render and a loaded machine need the other half.
  const choice = NETWORKS[scale].find((n) => mp * n.secondsPerMp <= secondsLeft / 2);
  if (!choice) return lanczos3("the network would not finish well before the job's timeout");
  return { upscaler: 'network', network: choice.size, scale, width, height, estimatedSeconds: mp * choice.secondsPerMp };
}

/** The plan as the job's details show it: `esrgan-medium x4`, or `lanczos3`. */
export function upscalerName(plan: UpscalePlan): string {
  return plan.upscaler === 'network' ? `esrgan-${plan.network} x${plan.scale}` : 'lanczos3';
}

export type TileUpscaler = (rgb: Uint8Array, width: number, height: number) => Promise<Uint8Array>;

/**
 * `img` enlarged `scale` times by `upscaleTile`, tile by tile: each TILE square is run with
 * TILE_PAD pixels of the picture around it (fewer at the picture's edges) and only its own square
 * of the result is kept. The context is wider than the network's receptive field, so every output
 * pixel is what the whole picture in one run would give: no seams. The signal is checked and the
 * event loop let run (heartbeats, cancel) between tiles; `onTile` reports the fraction done.
 */
export async function upscaleTiled(
  img: RawImage,
  scale: number,
  upscaleTile: TileUpscaler,
  signal: AbortSignal,
  onTile?: (done: number) => void,
  pad: number = TILE_PAD,
): Promise<RawImage> {
  const [W, H] = [img.width * scale, img.height * scale];
  const out = Buffer.alloc(W * H * 3);
  const across = Math.ceil(img.width / TILE);
  const total = across * Math.ceil(img.height / TILE);
  let done = 0;
  for (let ty = 0; ty < img.height; ty += TILE) {
    for (let tx = 0; tx < img.width; tx += TILE) {
      signal.throwIfAborted();
      const [x1, y1] = [Math.min(img.width, tx + TILE), Math.min(img.height, ty + TILE)];
      const [px0, py0] = [Math.max(0, tx - pad), Math.max(0, ty - pad)];
      const [px1, py1] = [Math.min(img.width, x1 + pad), Math.min(img.height, y1 + pad)];
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
  const model = await esrgan(plan.scale, plan.network);
  signal.throwIfAborted();
  return upscaleTiled(img, plan.scale, (rgb, w, h) => model.upscale(rgb, w, h), signal, onTile);
}
