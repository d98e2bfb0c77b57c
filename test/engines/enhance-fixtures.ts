import sharp from 'sharp';
import type { Pixels } from './engine-harness.js';

/**
 * Input images with one known fault each (soft, noisy, blocky) and the measures that show an
 * enhancer fixed it, for the enhance tests: each measure is computed on luminance.
 */

function luma(p: Pixels): Float64Array {
  const out = new Float64Array(p.width * p.height);
  for (let i = 0; i < out.length; i++) out[i] = 0.299 * p.data[i * 3]! + 0.587 * p.data[i * 3 + 1]! + 0.114 * p.data[i * 3 + 2]!;
  return out;
}

/** Variance of the 4-neighbour Laplacian: the usual focus measure, higher when sharper. */
export function laplacianVariance(p: Pixels): number {
  const l = luma(p);
  const w = p.width;
  const values: number[] = [];
  for (let y = 1; y < p.height - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      values.push(l[i - 1]! + l[i + 1]! + l[i - w]! + l[i + w]! - 4 * l[i]!);
    }
  }
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
}

/** Standard deviation of luminance: on a flat grey input, the noise left. */
export function lumaStdDev(p: Pixels): number {
  const l = luma(p);
  const mean = l.reduce((a, b) => a + b, 0) / l.length;
  return Math.sqrt(l.reduce((a, v) => a + (v - mean) ** 2, 0) / l.length);
}

/**
 * JPEG blockiness: the mean step between neighbours across the 8 x 8 grid over the mean step
 * inside blocks, both directions. About 1 for a natural image; well above for a blocky one.
 */
export function blockiness(p: Pixels): number {
  const l = luma(p);
  const w = p.width;
  let [edge, edges, inner, inners] = [0, 0, 0, 0];
  for (let y = 1; y < p.height; y++) {
    for (let x = 1; x < w; x++) {
      const i = y * w + x;
      for (const [d, onGrid] of [
        [Math.abs(l[i]! - l[i - 1]!), x % 8 === 0],
        [Math.abs(l[i]! - l[i - w]!), y % 8 === 0],
      ] as const) {
        if (onGrid) [edge, edges] = [edge + d, edges + 1];
        else [inner, inners] = [inner + d, inners + 1];
      }
    }
  }
  return edge / edges / (inner / inners);
}

/** Shapes with soft edges: what an upscaler is asked to sharpen. */
export function softImage(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#4a6b8c"/>
    <circle cx="${width * 0.35}" cy="${height * 0.4}" r="${width * 0.2}" fill="#f0d060"/>
    <rect x="${width * 0.55}" y="${height * 0.45}" width="${width * 0.3}" height="${height * 0.35}" fill="#202830"/>
    <path d="M0 ${height} L${width * 0.5} ${height * 0.6} L${width} ${height} Z" fill="#c04040"/>
  </svg>`;
  return sharp(Buffer.from(svg)).blur(2).png().toBuffer();
}

/** Mid-grey with seeded Gaussian noise of `sigma` levels (Box-Muller over a small LCG). */
export function noisyGrey(width: number, height: number, sigma: number): Promise<Buffer> {
  let state = 12345;
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const n = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()) * sigma;
    data.fill(Math.max(0, Math.min(255, Math.round(128 + n))), i * 3, i * 3 + 3);
  }
  return sharp(data, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** A smooth gradient with a disc, saved at JPEG quality 5: flat 8 x 8 blocks with steps between. */
export function blockyJpeg(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#203040"/><stop offset="1" stop-color="#e0c0a0"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <circle cx="${width / 2}" cy="${height / 2}" r="${width / 4}" fill="#80a060" opacity="0.6"/>
  </svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 5, chromaSubsampling: '4:4:4' }).toBuffer();
}

/** Left half red, right half blue: where a crop or a fit puts the picture is plain to see. */
export function redBlue(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#e00000"/><rect x="${width / 2}" width="${width / 2}" height="${height}" fill="#0000e0"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** The RGB of one pixel. */
export function pixelAt(p: Pixels, x: number, y: number): [number, number, number] {
  const i = (y * p.width + x) * 3;
  return [p.data[i]!, p.data[i + 1]!, p.data[i + 2]!];
}
