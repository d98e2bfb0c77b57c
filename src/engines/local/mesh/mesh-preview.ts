import sharp from 'sharp';
import type { TriangleMesh } from './gltf.js';
import type { RawImage } from '../image/pixels.js';
import type { Rgb } from '../image/scene-svg.js';

/**
 * A picture of a mesh, drawn by a small software rasteriser (no GPU or native 3D library on a
 * server): an orthographic view from above and to the right, a z-buffer, back faces culled, and
 * Lambert shading from the mesh's own normals under one light from the upper right (so the sides
 * the view shows are lit), in linear light. Drawn at twice the size and reduced, which smooths
 * the edges.
 */

export interface PreviewLook {
  /** The base colour texture (sampled at the mesh's UVs), or none. */
  readonly texture?: RawImage;
  /** sRGB base colour, multiplying the texture when there is one. */
  readonly colour: Rgb;
}

const YAW = (-30 * Math.PI) / 180;
const PITCH = (25 * Math.PI) / 180;
const LIGHT = normalise([0.35, 0.6, 0.72]);
const AMBIENT = 0.28;
const SUPERSAMPLE = 2;
/** Triangles drawn between two looks at the signal. */
const BATCH = 4096;

/** An sRGB channel value (0 to 255, fractions allowed) in linear light, 0 to 1. */
export function srgbToLinear(c: number): number {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}

const SRGB_TO_LINEAR = Float32Array.from({ length: 256 }, (_, i) => srgbToLinear(i));
const LINEAR_STEPS = 4095;
const LINEAR_TO_SRGB = Uint8Array.from({ length: LINEAR_STEPS + 1 }, (_, i) => {
  const c = i / LINEAR_STEPS;
  return Math.round(255 * (c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055));
});

/** Renders `mesh` into a `size` x `size` RGB image. */
export async function renderMeshPreview(mesh: TriangleMesh, look: PreviewLook, size: number, signal: AbortSignal): Promise<RawImage> {
  const s = size * SUPERSAMPLE;
  const count = mesh.positions.length / 3;
  const [cy, sy, cp, sp] = [Math.cos(YAW), Math.sin(YAW), Math.cos(PITCH), Math.sin(PITCH)];
  // View space: the yaw about Y, then the pitch about X; the camera looks down -Z.
  const view = (x: number, y: number, z: number): [number, number, number] => {
    const x1 = x * cy + z * sy;
    const z1 = -x * sy + z * cy;
    return [x1, y * cp - z1 * sp, y * sp + z1 * cp];
  };
  const vx = new Float32Array(count);
  const vy = new Float32Array(count);
  const vz = new Float32Array(count);
  const light = new Float32Array(count);
  for (let k = 0; k < count; k++) {
    const p = view(mesh.positions[3 * k]!, mesh.positions[3 * k + 1]!, mesh.positions[3 * k + 2]!);
    const n = view(mesh.normals[3 * k]!, mesh.normals[3 * k + 1]!, mesh.normals[3 * k + 2]!);
    [vx[k], vy[k], vz[k]] = p;
    light[k] = AMBIENT + (1 - AMBIENT) * Math.max(0, n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2]);
  }
  // Fit the view's extent into 88 % of the picture, centred; screen y grows downwards.
  const [minX, maxX, minY, maxY] = [min(vx), max(vx), min(vy), max(vy)];
  const scale = (0.88 * s) / Math.max(maxX - minX, maxY - minY, 1e-9);
  const sx = Float32Array.from(vx, (x) => s / 2 + (x - (minX + maxX) / 2) * scale);
  const sy2 = Float32Array.from(vy, (y) => s / 2 - (y - (minY + maxY) / 2) * scale);

  const depth = new Float32Array(s * s).fill(-Infinity);
  const colour = new Float32Array(s * s * 3);
  const base = look.colour.map((c) => SRGB_TO_LINEAR[Math.round(Math.min(255, Math.max(0, c)))]!);
  const tex = look.texture;
  const uvs = tex ? mesh.uvs : undefined;
  const idx = mesh.indices;

  for (let t = 0; t < idx.length; t += 3) {
    if (t % (BATCH * 3) === 0) await checkpoint(signal);
    const [a, b, c] = [idx[t]!, idx[t + 1]!, idx[t + 2]!];
    // Counter-clockwise in view space (y up) faces the camera; the rest are hidden back faces.
    if ((vx[b]! - vx[a]!) * (vy[c]! - vy[a]!) - (vx[c]! - vx[a]!) * (vy[b]! - vy[a]!) <= 0) continue;
    const [ax, ay, bx, by, cx, cy2] = [sx[a]!, sy2[a]!, sx[b]!, sy2[b]!, sx[c]!, sy2[c]!];
    const area = (bx - ax) * (cy2 - ay) - (cx - ax) * (by - ay);
    if (area === 0) continue;
    const x0 = Math.max(0, Math.floor(Math.min(ax, bx, cx)));
    const x1 = Math.min(s - 1, Math.ceil(Math.max(ax, bx, cx)));
    const y0 = Math.max(0, Math.floor(Math.min(ay, by, cy2)));
    const y1 = Math.min(s - 1, Math.ceil(Math.max(ay, by, cy2)));
    for (let py = y0; py <= y1; py++) {
      const yc = py + 0.5;
      for (let px = x0; px <= x1; px++) {
        const xc = px + 0.5;
        const wa = ((bx - xc) * (cy2 - yc) - (cx - xc) * (by - yc)) / area;
        const wb = ((cx - xc) * (ay - yc) - (ax - xc) * (cy2 - yc)) / area;
        const wc = 1 - wa - wb;
        if (wa < 0 || wb < 0 || wc < 0) continue;
        const z = wa * vz[a]! + wb * vz[b]! + wc * vz[c]!;
        const at = py * s + px;
        if (z <= depth[at]!) continue;
        depth[at] = z;
        const shade = wa * light[a]! + wb * light[b]! + wc * light[c]!;
        let [r, g, bl] = base as [number, number, number];
        if (tex && uvs) {
          const u = wa * uvs[2 * a]! + wb * uvs[2 * b]! + wc * uvs[2 * c]!;
          const v = wa * uvs[2 * a + 1]! + wb * uvs[2 * b + 1]! + wc * uvs[2 * c + 1]!;
          const tx = Math.min(tex.width - 1, Math.max(0, Math.floor(u * tex.width)));
          const ty = Math.min(tex.height - 1, Math.max(0, Math.floor(v * tex.height)));
          const o = 3 * (ty * tex.width + tx);
          r *= SRGB_TO_LINEAR[tex.data[o]!]!;
          g *= SRGB_TO_LINEAR[tex.data[o + 1]!]!;
          bl *= SRGB_TO_LINEAR[tex.data[o + 2]!]!;
        }
        colour[3 * at] = r * shade;
        colour[3 * at + 1] = g * shade;
        colour[3 * at + 2] = bl * shade;
      }
    }
  }
  await checkpoint(signal);

  const out = Buffer.alloc(s * s * 3);
  for (let at = 0; at < s * s; at++) {
    if (depth[at] === -Infinity) {
      // A soft vertical gradient behind the model, so its silhouette reads on any colour.
      out.fill(Math.round(236 - (30 * Math.floor(at / s)) / s), 3 * at, 3 * at + 3);
      continue;
    }
    for (let ch = 0; ch < 3; ch++) out[3 * at + ch] = LINEAR_TO_SRGB[Math.round(Math.min(1, colour[3 * at + ch]!) * LINEAR_STEPS)]!;
  }
  const { data, info } = await sharp(out, { raw: { width: s, height: s, channels: 3 } })
    .resize(size, size, { kernel: 'lanczos3' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Lets other work run, then stops if the job was cancelled. */
export async function checkpoint(signal: AbortSignal): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}

function normalise(v: [number, number, number]): [number, number, number] {
  const l = Math.hypot(...v);
  return [v[0] / l, v[1] / l, v[2] / l];
}

const min = (a: Float32Array) => a.reduce((m, v) => Math.min(m, v), Infinity);
const max = (a: Float32Array) => a.reduce((m, v) => Math.max(m, v), -Infinity);
