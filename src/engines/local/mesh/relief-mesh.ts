import type { TriangleMesh } from './gltf.js';

/**
 * A closed relief: the image's luminance as a height field over a rectangular slab, the way a
 * lithophane or a carved panel is made. The front is a grid of (cols + 1) x (rows + 1) vertices
 * with smooth normals; four flat sides and a flat back close it, so every edge is shared by
 * exactly two triangles and the mesh has an inside (3D printers and physics engines need that).
 * Sides and back have their own vertices, so their hard edges shade flat.
 */

/** Heights 0..1, row-major, row 0 at the top of the image; (cols + 1) x (rows + 1) samples. */
export interface HeightField {
  readonly cols: number;
  readonly rows: number;
  readonly heights: Float32Array;
}

export interface ReliefShape {
  /** Width and height of the slab, in metres. */
  readonly sizeX: number;
  readonly sizeY: number;
  /** Thickness of the slab under the lowest point, and the added height at a height of 1. */
  readonly base: number;
  readonly depth: number;
}

/** Triangles of a relief with `cols` x `rows` cells: the front, two per side segment, one per back segment. */
export const reliefFaces = (cols: number, rows: number): number => 2 * cols * rows + 6 * (cols + rows);

/**
 * The grid with the most cells whose relief stays within `faceLimit` triangles, shaped like the
 * image (`aspect` = width / height) and with no more cells than the image has pixels (more would
 * only interpolate).
 */
export function reliefGrid(faceLimit: number, aspect: number, pixels: { width: number; height: number }): { cols: number; rows: number } {
  let rows = Math.max(1, Math.min(pixels.height, Math.floor(Math.sqrt(faceLimit / (2 * aspect)))));
  const colsFor = (r: number) => Math.max(1, Math.min(pixels.width, Math.round(r * aspect)));
  while (rows > 1 && reliefFaces(colsFor(rows), rows) > faceLimit) rows--;
  let cols = colsFor(rows);
  // A very wide image at one row: fewer columns rather than more faces than allowed.
  while (cols > 1 && reliefFaces(cols, rows) > faceLimit) cols--;
  return { cols, rows };
}

export function buildRelief(field: HeightField, shape: ReliefShape, withUvs: boolean): TriangleMesh {
  const { cols, rows, heights } = field;
  const nx = cols + 1;
  const ny = rows + 1;
  const ring = perimeter(cols, rows);
  const vertexCount = nx * ny + 4 * ring.length + ring.length + 1;
  const positions = new Float32Array(vertexCount * 3);
  const normals = new Float32Array(vertexCount * 3);
  const uvs = new Float32Array(vertexCount * 2);
  const indices = new Uint32Array(reliefFaces(cols, rows) * 3);

  const xs = Float64Array.from({ length: nx }, (_, i) => -shape.sizeX / 2 + (shape.sizeX * i) / cols);
  const ys = Float64Array.from({ length: ny }, (_, j) => shape.sizeY / 2 - (shape.sizeY * j) / rows);
  const z = (i: number, j: number) => shape.base + shape.depth * heights[j * nx + i]!;

  let v = 0;
  const vertex = (x: number, y: number, zz: number, n: readonly [number, number, number], i: number, j: number): number => {
    positions.set([x, y, zz], v * 3);
    normals.set(n, v * 3);
    uvs.set([i / cols, j / rows], v * 2);
    return v++;
  };
  let t = 0;
  const triangle = (a: number, b: number, c: number) => {
    indices.set([a, b, c], t);
    t += 3;
  };

  // Front: normals from the height field's slope (central differences, one-sided at the edges).
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const [i0, i1] = [Math.max(0, i - 1), Math.min(cols, i + 1)];
      const [j0, j1] = [Math.max(0, j - 1), Math.min(rows, j + 1)];
      const dzdx = (z(i1, j) - z(i0, j)) / (xs[i1]! - xs[i0]!);
      const dzdy = (z(i, j0) - z(i, j1)) / (ys[j0]! - ys[j1]!);
      vertex(xs[i]!, ys[j]!, z(i, j), unit(-dzdx, -dzdy, 1), i, j);
    }
  }
  for (let j = 0; j < rows; j++) {
    for (let i = 0; i < cols; i++) {
      const [a, b, c, d] = [j * nx + i, j * nx + i + 1, (j + 1) * nx + i, (j + 1) * nx + i + 1];
      triangle(c, d, b);
      triangle(c, b, a);
    }
  }

  // Sides: a flat quad per perimeter segment, walked counter-clockwise as seen from the front.
  ring.forEach(([pi, pj], k) => {
    const [qi, qj] = ring[(k + 1) % ring.length]!;
    const n = unit(ys[qj]! - ys[pj]!, -(xs[qi]! - xs[pi]!), 0);
    const tp = vertex(xs[pi]!, ys[pj]!, z(pi, pj), n, pi, pj);
    const tq = vertex(xs[qi]!, ys[qj]!, z(qi, qj), n, qi, qj);
    const bp = vertex(xs[pi]!, ys[pj]!, 0, n, pi, pj);
    const bq = vertex(xs[qi]!, ys[qj]!, 0, n, qi, qj);
    triangle(bp, bq, tq);
    triangle(bp, tq, tp);
  });

  // Back: a fan from the centre over the same perimeter points, facing -Z.
  const back: readonly [number, number, number] = [0, 0, -1];
  const first = v;
  for (const [i, j] of ring) vertex(xs[i]!, ys[j]!, 0, back, i, j);
  const centre = v;
  positions.set([0, 0, 0], v * 3);
  normals.set(back, v * 3);
  uvs.set([0.5, 0.5], v * 2);
  v++;
  ring.forEach((_, k) => triangle(centre, first + ((k + 1) % ring.length), first + k));

  if (v !== vertexCount || t !== indices.length) throw new Error('buildRelief: counts disagree');
  return { positions, normals, indices, ...(withUvs ? { uvs } : {}) };
}

/** The grid's border points, counter-clockwise seen from the front (+Z; x right, y up), corners once. */
function perimeter(cols: number, rows: number): Array<[number, number]> {
  const ring: Array<[number, number]> = [];
  for (let i = 0; i < cols; i++) ring.push([i, rows]); // bottom, left to right
  for (let j = rows; j > 0; j--) ring.push([cols, j]); // right, upwards
  for (let i = cols; i > 0; i--) ring.push([i, 0]); // top, right to left
  for (let j = 0; j < rows; j++) ring.push([0, j]); // left, downwards
  return ring;
}

function unit(x: number, y: number, z: number): [number, number, number] {
  const l = Math.hypot(x, y, z);
  return [x / l, y / l, z / l];
}
