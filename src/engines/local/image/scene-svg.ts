import type { Prng } from '../seed.js';
import { unitHash } from '../seed.js';

/**
 * The picture every local render starts from: an SVG of a gradient and overlapping shapes, its
 * hues taken from the prompt and its layout from the PRNG, rasterised by sharp. No <text>: fonts
 * differ between machines, and the bytes must not.
 */

export interface SceneOptions {
  readonly width: number;
  readonly height: number;
  readonly prompt: string;
  /** Degrees added to the prompt's hues (styles, moodboards, style images). */
  readonly hueShift: number;
  readonly shapes: number;
  /** Multiplies shape sizes; 1 is neutral. */
  readonly sizeFactor: number;
  /** Largest rotation of a shape, in degrees. */
  readonly tiltDeg: number;
  /** Shear of every shape, in degrees (signed). */
  readonly skewDeg: number;
  /** How many small detail marks are scattered on top. */
  readonly details: number;
}

export type Rgb = readonly [number, number, number];

export function hslToRgb(hueDeg: number, s: number, l: number): Rgb {
  const h = (((hueDeg % 360) + 360) % 360) / 360;
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

function hex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

/** Fixed decimals keep the SVG text, and so the pixels, identical across runs. */
function n(value: number): string {
  return value.toFixed(2);
}

/** The hue a prompt paints in; the seed moves it only a little, so a prompt keeps its colours. */
export function promptHue(prompt: string): number {
  return unitHash(`hue:${prompt}`) * 360;
}

export function sceneSvg(prng: Prng, o: SceneOptions): string {
  const { width: w, height: h } = o;
  const unit = Math.min(w, h);
  const hue = promptHue(o.prompt) + o.hueShift + prng.range(-15, 15);
  const palette = [0, 30, -30, 150, 180].map((d) =>
    hex(hslToRgb(hue + d + prng.range(-8, 8), prng.range(0.55, 0.9), prng.range(0.35, 0.7))),
  );
  const angle = prng.range(0, Math.PI * 2);
  const [dx, dy] = [Math.cos(angle) / 2, Math.sin(angle) / 2];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
    '<defs>',
    `<linearGradient id="bg" x1="${n(0.5 - dx)}" y1="${n(0.5 - dy)}" x2="${n(0.5 + dx)}" y2="${n(0.5 + dy)}">`,
    `<stop offset="0" stop-color="${hex(hslToRgb(hue, 0.6, 0.18))}"/>`,
    `<stop offset="0.55" stop-color="${hex(hslToRgb(hue + 40, 0.55, 0.42))}"/>`,
    `<stop offset="1" stop-color="${hex(hslToRgb(hue + 200, 0.5, 0.7))}"/>`,
    '</linearGradient>',
    `<radialGradient id="glow"><stop offset="0" stop-color="#ffffff" stop-opacity="0.55"/>`,
    '<stop offset="1" stop-color="#ffffff" stop-opacity="0"/></radialGradient>',
    '</defs>',
    `<rect width="${w}" height="${h}" fill="url(#bg)"/>`,
    `<circle cx="${n(prng.range(0, w))}" cy="${n(prng.range(0, h))}" r="${n(unit * prng.range(0.3, 0.6))}" fill="url(#glow)"/>`,
  ];
  for (let i = 0; i < o.shapes; i++) parts.push(shape(prng, o, unit, prng.pick(palette)));
  for (let i = 0; i < o.details; i++) {
    const r = (unit / 1024) * prng.range(1.5, 6);
    parts.push(
      `<circle cx="${n(prng.range(0, w))}" cy="${n(prng.range(0, h))}" r="${n(r)}" fill="#ffffff" fill-opacity="${n(prng.range(0.4, 0.9))}"/>`,
    );
  }
  parts.push('</svg>');
  return parts.join('');
}

function shape(prng: Prng, o: SceneOptions, unit: number, colour: string): string {
  const cx = prng.range(-0.05, 1.05) * o.width;
  const cy = prng.range(-0.05, 1.05) * o.height;
  const size = unit * prng.range(0.03, 0.2) * o.sizeFactor;
  const rotate = prng.range(-1, 1) * o.tiltDeg;
  const transform = `translate(${n(cx)} ${n(cy)}) rotate(${n(rotate)}) skewX(${n(o.skewDeg)})`;
  const paint = `fill="${colour}" fill-opacity="${n(prng.range(0.45, 0.9))}"`;
  const kind = prng.int(0, 3);
  let body: string;
  if (kind === 0) {
    body = `<circle r="${n(size)}" ${paint}/>`;
  } else if (kind === 1) {
    const [rw, rh] = [size * prng.range(1, 2.4), size * prng.range(0.5, 1.6)];
    body = `<rect x="${n(-rw / 2)}" y="${n(-rh / 2)}" width="${n(rw)}" height="${n(rh)}" rx="${n(size * 0.15)}" ${paint}/>`;
  } else if (kind === 2) {
    const corners = prng.int(3, 7);
    const points: string[] = [];
    for (let k = 0; k < corners; k++) {
      const a = (k / corners) * Math.PI * 2 + prng.range(-0.3, 0.3);
      const r = size * prng.range(0.6, 1.3);
      points.push(`${n(Math.cos(a) * r)},${n(Math.sin(a) * r)}`);
    }
    body = `<polygon points="${points.join(' ')}" ${paint}/>`;
  } else {
    const stroke = Math.max(1, size * prng.range(0.08, 0.25));
    body = `<circle r="${n(size)}" fill="none" stroke="${colour}" stroke-width="${n(stroke)}" stroke-opacity="0.85"/>`;
  }
  return `<g transform="${transform}">${body}</g>`;
}
