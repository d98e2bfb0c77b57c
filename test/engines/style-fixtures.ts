import sharp from 'sharp';
import type { Pixels } from './engine-harness.js';

/**
 * Training images with a style anyone would name (warm, dark and high-contrast; cool, pale, flat
 * and grainy) and the measures that show a picture moved toward one: distance to its palette and
 * to its tone curve, computed here independently of the engine's own code.
 */

function svgPng(width: number, height: number, body: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${body}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Near-black maroon with bands of orange and amber: warm, saturated, very contrasted. */
export function warmImages(): Promise<Buffer[]> {
  return Promise.all([
    svgPng(240, 160, '<rect width="240" height="160" fill="#260400"/><rect x="60" width="60" height="160" fill="#ff7a10"/><rect x="180" width="60" height="160" fill="#ffc640"/>'),
    svgPng(200, 200, '<rect width="200" height="200" fill="#ff7a10"/><circle cx="100" cy="100" r="70" fill="#260400"/><circle cx="100" cy="100" r="25" fill="#ffc640"/>'),
    svgPng(160, 240, '<rect width="160" height="240" fill="#2e0800"/><rect y="80" width="160" height="50" fill="#ff6a00"/><rect y="190" width="160" height="50" fill="#ffb830"/>'),
  ]);
}

/** A pale slate-blue gradient with fine noise: cool, muted, flat. */
export async function coolImages(): Promise<Buffer[]> {
  const images: Buffer[] = [];
  for (const [k, [from, to]] of [['#7a94b8', '#90a8c8'], ['#8aa0c0', '#7c98bc']].entries()) {
    const gradient = `<defs><linearGradient id="g"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs><rect width="220" height="160" fill="url(#g)"/>`;
    const { data, info } = await sharp(await svgPng(220, 160, gradient)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let state = 12345 + k;
    for (let i = 0; i < data.length; i += 3) {
      state = (state * 1103515245 + 12345) >>> 0;
      const n = ((state >>> 16) % 13) - 6;
      for (let c = 0; c < 3; c++) data[i + c] = Math.max(0, Math.min(255, data[i + c]! + n));
    }
    images.push(await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).png().toBuffer());
  }
  return images;
}

export interface ArtifactPalette {
  readonly palette: readonly { rgb: readonly number[]; weight: number }[];
  readonly tone: readonly number[];
}

/** Mean RGB distance from each pixel to the nearest palette colour. */
export function paletteDistance(p: Pixels, palette: ArtifactPalette['palette']): number {
  let sum = 0;
  for (let i = 0; i < p.data.length; i += 3) {
    let best = Infinity;
    for (const { rgb } of palette) {
      best = Math.min(best, Math.hypot(p.data[i]! - rgb[0]!, p.data[i + 1]! - rgb[1]!, p.data[i + 2]! - rgb[2]!));
    }
    sum += best;
  }
  return sum / (p.data.length / 3);
}

/** Luma quantiles at the given fractions (Rec. 601, nearest rank). */
export function lumaQuantiles(p: Pixels, fractions: readonly number[]): number[] {
  const values = new Float64Array(p.data.length / 3);
  for (let i = 0; i < values.length; i++) values[i] = 0.299 * p.data[i * 3]! + 0.587 * p.data[i * 3 + 1]! + 0.114 * p.data[i * 3 + 2]!;
  values.sort();
  return fractions.map((f) => values[Math.min(values.length - 1, Math.floor(f * values.length))]!);
}

export const DECILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/** Mean absolute gap between a picture's luma deciles and the training images' own. */
export function toneDistance(p: Pixels, training: readonly number[]): number {
  const own = lumaQuantiles(p, DECILES);
  return own.reduce((s, v, k) => s + Math.abs(v - training[k]!), 0) / own.length;
}

/** Mean chroma (max − min) over 255. */
export function meanChroma(p: Pixels): number {
  let sum = 0;
  for (let i = 0; i < p.data.length; i += 3) {
    sum += Math.max(p.data[i]!, p.data[i + 1]!, p.data[i + 2]!) - Math.min(p.data[i]!, p.data[i + 1]!, p.data[i + 2]!);
  }
  return sum / (p.data.length / 3) / 255;
}
