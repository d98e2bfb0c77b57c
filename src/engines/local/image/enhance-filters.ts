import { setImmediate as nextTurn } from 'node:timers/promises';
import { lumaOf, toByte } from './pixels.js';
import type { RawImage } from './pixels.js';
import type { Prng } from '../seed.js';

/**
 * The enhancers' own pixel filters, the ones sharp has no operation for: JPEG deblocking and film
 * grain. Both change `img.data` in place (the caller owns the buffer) and work in bands of rows,
 * yielding between bands and stopping there when `signal` aborts, so a cancelled job does not run
 * a 64-megapixel loop to its end.
 */

const BAND_ROWS = 64;

async function inBands(height: number, signal: AbortSignal, band: (y0: number, y1: number) => void): Promise<void> {
  for (let y0 = 0; y0 < height; y0 += BAND_ROWS) {
    signal.throwIfAborted();
    band(y0, Math.min(height, y0 + BAND_ROWS));
    await nextTurn();
  }
  signal.throwIfAborted();
}

/** JPEG codes 8 x 8 blocks; its artifacts are steps on that grid. */
export const BLOCK = 8;

/**
 * Smooths the four pixels across one block edge (p1 p0 | q0 q1, `step` bytes apart) when the step
 * there is small and both sides are flat: a blocking artifact, not an edge of the picture (the
 * test of H.264's in-loop deblocking filter, whose thresholds grow with `amount`).
 */
function smoothEdge(d: Buffer, i: number, step: number, amount: number, alpha: number, beta: number): void {
  const p1 = d[i - 2 * step]!;
  const p0 = d[i - step]!;
  const q0 = d[i]!;
  const q1 = d[i + step]!;
  if (Math.abs(p0 - q0) >= alpha || Math.abs(p1 - p0) >= beta || Math.abs(q1 - q0) >= beta) return;
  const delta = (((q0 - p0) * 4 + (p1 - q1)) / 8) * amount;
  d[i - step] = toByte(p0 + delta);
  d[i] = toByte(q0 - delta);
  d[i - 2 * step] = toByte(p1 + delta / 2);
  d[i + step] = toByte(q1 - delta / 2);
}

/**
 * Compression-artifact repair: every vertical then every horizontal edge of the 8 x 8 grid,
 * smoothed where it is a blocking step. `amount` 0..1 scales the correction and the size of the
 * steps it treats as artifacts (at 1, steps up to 48 levels across flat blocks).
 */
export async function deblock(img: RawImage, amount: number, signal: AbortSignal): Promise<void> {
  if (amount <= 0) return;
  const { data, width, height } = img;
  const alpha = 8 + 40 * amount;
  const beta = 2 + 8 * amount;
  const row = width * 3;
  await inBands(height, signal, (y0, y1) => {
    for (let y = y0; y < y1; y++) {
      for (let x = BLOCK; x + 1 < width; x += BLOCK) {
        const i = y * row + x * 3;
        for (let c = 0; c < 3; c++) smoothEdge(data, i + c, 3, amount, alpha, beta);
      }
    }
  });
  await inBands(height, signal, (y0, y1) => {
    for (let y = Math.max(BLOCK, Math.ceil(y0 / BLOCK) * BLOCK); y < y1 && y + 1 < height; y += BLOCK) {
      for (let i = y * row; i < (y + 1) * row; i++) smoothEdge(data, i, row, amount, alpha, beta);
    }
  });
}

/**
 * Film grain: a seeded luminance noise (the same offset on the three channels), strongest in the
 * mid-tones and fading to none in black and white, as grain shows on film. `sigma` is its
 * standard deviation in mid-grey, in 8-bit levels.
 */
export async function addGrain(img: RawImage, sigma: number, prng: Prng, signal: AbortSignal): Promise<void> {
  if (sigma <= 0) return;
  const { data, width, height } = img;
  const row = width * 3;
  // Three uniforms in [0, 1), summed and centred, have variance 1/4: doubled, a cheap, nearly
  // normal draw of variance 1.
  await inBands(height, signal, (y0, y1) => {
    for (let i = y0 * row; i < y1 * row; i += 3) {
      const noise = prng.next() + prng.next() + prng.next() - 1.5;
      const luma = lumaOf(data[i]!, data[i + 1]!, data[i + 2]!) / 255;
      const n = noise * 2 * sigma * 4 * luma * (1 - luma);
      data[i] = toByte(data[i]! + n);
      data[i + 1] = toByte(data[i + 1]! + n);
      data[i + 2] = toByte(data[i + 2]! + n);
    }
  });
}
