import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { accessorValues, readGlb, validateGlb, viewBytes } from '../helpers/gltf.js';
import type { Glb } from '../helpers/gltf.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { LAVFI_VIDEO, ffmpegFile } from './asset-fixtures.js';
import { TempDirs, colourDistance, dataUri, fakeContext, meanColour, rgb, solidPng } from './engine-harness.js';

/** 3d/vendor-k/model-k-1 on the local engine: every file read back, the GLB through the Khronos validator. */

const K1 = '3d/vendor-k/model-k-1';
const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const svgPng = (svg: string) => sharp(Buffer.from(svg)).png().toBuffer();
/** 4:3, a yellow disc and a red block on dark blue. */
const scene = () =>
  svgPng(
    '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="#203060"/>' +
      '<circle cx="400" cy="300" r="220" fill="#f0c040"/><rect x="100" y="80" width="150" height="100" fill="#c03030"/></svg>',
  );
/** 4:3, left half black, right half white. */
const split = () =>
  svgPng('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#000"/><rect x="200" width="200" height="300" fill="#fff"/></svg>');
/** A grey dome: light in the middle, darker at the rim, mid-grey on average. */
const dome = () =>
  svgPng(
    '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><defs><radialGradient id="g"><stop offset="0" stop-color="#f0f0f0"/>' +
      '<stop offset="1" stop-color="#606060"/></radialGradient></defs><rect width="256" height="256" fill="url(#g)"/></svg>',
  );

interface Made {
  readonly glb: Glb;
  readonly bytes: Buffer;
  readonly preview: Buffer;
  readonly outDir: string;
}

async function make(image: Buffer, extra: Record<string, unknown> = {}): Promise<Made> {
  const ctx = fakeContext(await dirs.make());
  const outputs = await engine.run({ id: 'j', model: K1, request: { image_url: dataUri(image), ...extra } }, ctx);
  expect(outputs).toEqual([
    { name: 'model.glb', contentType: 'model/gltf-binary', role: 'model' },
    { name: 'preview.png', contentType: 'image/png', role: 'preview' },
  ]);
  expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
  expect(ctx.stages[2]).toMatchObject({ preview: { name: 'preview.png', role: 'preview' }, previewExisted: true });
  const bytes = await readFile(join(ctx.outDir, 'model.glb'));
  return { glb: readGlb(bytes), bytes, preview: await readFile(join(ctx.outDir, 'preview.png')), outDir: ctx.outDir };
}

const primitive = (glb: Glb) => glb.json.meshes[0]!.primitives[0]!;
const faces = (glb: Glb) => glb.json.accessors[primitive(glb).indices]!.count / 3;

async function expectValid(bytes: Buffer): Promise<void> {
  const report = await validateGlb(bytes);
  expect(report.issues.messages).toEqual([]);
  expect(report.issues.numErrors).toBe(0);
  expect(report.issues.numWarnings).toBe(0);
}

describe('model-k-1', { timeout: 60_000 }, () => {
  let sceneImage: Buffer;
  beforeAll(async () => {
    sceneImage = await scene();
  });

  it('writes binary glTF 2.0 that the Khronos validator accepts without an error or a warning, and a 512 x 512 PNG preview', async () => {
    const { glb, bytes, preview } = await make(sceneImage);
    expect(glb).toMatchObject({ version: 2, length: bytes.length, json: { asset: { version: '2.0' } } });
    await expectValid(bytes);
    expect(isPng(preview)).toBe(true);
    expect(readPngSize(preview)).toEqual({ width: 512, height: 512 });
    // The default face_limit is 20000, and the relief uses most of it.
    expect(faces(glb)).toBeLessThanOrEqual(20_000);
    expect(faces(glb)).toBeGreaterThan(18_000);
  });

  it.each([500, 5_000, 200_000])('keeps to face_limit %i, counted from the index accessor, and uses most of it', async (limit) => {
    const { glb, bytes } = await make(sceneImage, { face_limit: limit, texture: false });
    expect(faces(glb)).toBeLessThanOrEqual(limit);
    expect(faces(glb)).toBeGreaterThan(0.9 * limit);
    await expectValid(bytes);
  });

  it('uses no more grid cells than the image has pixels, whatever the face_limit', async () => {
    const { glb } = await make(await solidPng(20, 10, '#808080'), { face_limit: 200_000 });
    // 20 x 10 cells: 400 front triangles, 6 per border cell for the sides and back.
    expect(faces(glb)).toBe(2 * 20 * 10 + 6 * (20 + 10));
  });

  it('embeds the image as a PNG texture in the BIN chunk when texture is true (the default)', async () => {
    const { glb } = await make(sceneImage);
    const { json } = glb;
    expect(Object.keys(primitive(glb).attributes).sort()).toEqual(['NORMAL', 'POSITION', 'TEXCOORD_0']);
    expect(json.materials[0]!.pbrMetallicRoughness).toMatchObject({ baseColorFactor: [1, 1, 1, 1], baseColorTexture: { index: 0 } });
    expect(json.textures).toEqual([{ sampler: 0, source: 0 }]);
    expect(json.images).toEqual([{ bufferView: expect.any(Number), mimeType: 'image/png' }]);
    const texture = viewBytes(glb, json.images![0]!.bufferView);
    expect(readPngSize(texture)).toEqual({ width: 1024, height: 1024 });
    expect(colourDistance(meanColour(await rgb(texture)), meanColour(await rgb(sceneImage)))).toBeLessThan(3);
    const uvs = accessorValues(glb, primitive(glb).attributes.TEXCOORD_0!);
    expect(Math.min(...uvs)).toBe(0);
    expect(Math.max(...uvs)).toBe(1);
  });

  it('has no image, texture or UVs when texture is false: one material in the image’s mean colour', async () => {
    const { glb, bytes } = await make(sceneImage, { texture: false });
    const { json } = glb;
    expect(json.images).toBeUndefined();
    expect(json.textures).toBeUndefined();
    expect(json.samplers).toBeUndefined();
    expect(Object.keys(primitive(glb).attributes).sort()).toEqual(['NORMAL', 'POSITION']);
    const factor = json.materials[0]!.pbrMetallicRoughness.baseColorFactor!;
    const srgb = factor.slice(0, 3).map((c) => 255 * (c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055));
    expect(colourDistance(srgb, meanColour(await rgb(sceneImage)))).toBeLessThan(2);
    expect(factor[3]).toBe(1);
    // Smaller than the textured file by about the texture.
    expect(bytes.length).toBeLessThan((await make(sceneImage)).bytes.length - 100_000);
  });

  it('is a closed surface, every edge shared by two triangles in opposite directions, enclosing a positive volume', async () => {
    const { glb } = await make(await split(), { face_limit: 2_000 });
    const positions = accessorValues(glb, primitive(glb).attributes.POSITION!);
    const indices = accessorValues(glb, primitive(glb).indices);
    // Vertices at one position (a front corner and the side's top corner) are one point of the surface.
    const ids = new Map<string, number>();
    const at = (v: number) => {
      const key = positions.slice(3 * v, 3 * v + 3).join(',');
      if (!ids.has(key)) ids.set(key, ids.size);
      return ids.get(key)!;
    };
    const edges = new Map<string, number>();
    let volume = 0;
    for (let t = 0; t < indices.length; t += 3) {
      const tri = [indices[t]!, indices[t + 1]!, indices[t + 2]!];
      const [a, b, c] = tri.map(at) as [number, number, number];
      for (const [p, q] of [[a, b], [b, c], [c, a]] as const) edges.set(`${p}>${q}`, (edges.get(`${p}>${q}`) ?? 0) + 1);
      const [p0, p1, p2] = tri.map((v) => positions.slice(3 * v, 3 * v + 3)) as [number[], number[], number[]];
      volume += (p0[0]! * (p1[1]! * p2[2]! - p1[2]! * p2[1]!) - p0[1]! * (p1[0]! * p2[2]! - p1[2]! * p2[0]!) + p0[2]! * (p1[0]! * p2[1]! - p1[1]! * p2[0]!)) / 6;
    }
    for (const [edge, count] of edges) {
      const [p, q] = edge.split('>');
      expect(count, edge).toBe(1);
      expect(edges.get(`${q}>${p}`), `${edge} reversed`).toBe(1);
    }
    // 1 m x 0.75 m: a 4 cm base everywhere, half of it 12 cm higher.
    expect(volume).toBeCloseTo(0.75 * (0.04 + 0.12 / 2), 2);
  });

  it('raises the front with the image’s brightness, on a 4:3 slab 1 m wide, with min/max on the position accessor', async () => {
    const { glb } = await make(await split(), { face_limit: 2_000 });
    const accessor = glb.json.accessors[primitive(glb).attributes.POSITION!]!;
    expect(accessor.min!.map((v) => +v.toFixed(4))).toEqual([-0.5, -0.375, 0]);
    expect(accessor.max!.map((v) => +v.toFixed(4))).toEqual([0.5, 0.375, 0.16]);
    const positions = accessorValues(glb, primitive(glb).attributes.POSITION!);
    const normals = accessorValues(glb, primitive(glb).attributes.NORMAL!);
    const front: Array<[number, number]> = [];
    for (let v = 0; v < positions.length / 3; v++) if (normals[3 * v + 2]! > 0.5) front.push([positions[3 * v]!, positions[3 * v + 2]!]);
    const dark = front.filter(([x]) => x < -0.1).map(([, z]) => z);
    const bright = front.filter(([x]) => x > 0.1).map(([, z]) => z);
    expect(Math.max(...dark)).toBeCloseTo(0.04, 3);
    expect(Math.min(...bright)).toBeCloseTo(0.16, 3);
    for (let v = 0; v < normals.length; v += 3) expect(Math.hypot(normals[v]!, normals[v + 1]!, normals[v + 2]!)).toBeCloseTo(1, 5);
  });

  it('shades the preview from the mesh’s normals: a flat slab evenly, a dome of the same colour with its slopes', async () => {
    const centre = async (png: Buffer) => {
      const { data } = await rgb(await sharp(png).extract({ left: 156, top: 156, width: 200, height: 200 }).png().toBuffer());
      const values = [...data];
      const mean = values.reduce((s, v) => s + v, 0) / values.length;
      return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
    };
    const flat = await make(await solidPng(256, 256, '#808080'), { texture: false });
    const bumped = await make(await dome(), { texture: false });
    expect(await centre(flat.preview)).toBeLessThan(1);
    expect(await centre(bumped.preview)).toBeGreaterThan(5);
  });

  it('shows the texture in the preview', async () => {
    const { preview } = await make(await solidPng(300, 200, '#d02020'));
    const [r, g, b] = meanColour(await rgb(await sharp(preview).extract({ left: 206, top: 206, width: 100, height: 100 }).png().toBuffer()));
    expect(r).toBeGreaterThan(g + 60);
    expect(r).toBeGreaterThan(b + 60);
  });

  it('gives identical bytes for an identical request', async () => {
    const [one, two] = [await make(sceneImage, { seed: 7 }), await make(sceneImage, { seed: 7 })];
    expect(one.bytes.equals(two.bytes)).toBe(true);
    expect(one.preview.equals(two.preview)).toBe(true);
  });

  it('fetches an image_url through the context (an asset or http URL)', async () => {
    const ctx = fakeContext(await dirs.make(), { 'https://assets.example/in.png': sceneImage });
    await engine.run({ id: 'j', model: K1, request: { image_url: 'https://assets.example/in.png' } }, ctx);
    expect(ctx.loaded).toEqual(['image_url']);
    await expectValid(await readFile(join(ctx.outDir, 'model.glb')));
  });

  it('fails with input_invalid before processing when image_url is a video or not an image', async () => {
    const mp4 = await readFile(await ffmpegFile(await dirs.make(), 'v.mp4', ['-y', ...LAVFI_VIDEO(1), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']));
    for (const [uri, message] of [
      [dataUri(mp4, 'video/mp4'), /^image_url is an? .*video.*, not a raster image/i],
      [dataUri(Buffer.from('just words'), 'text/plain'), /^image_url is a text file, not a raster image/],
    ] as const) {
      const ctx = fakeContext(await dirs.make());
      const err = await engine.run({ id: 'j', model: K1, request: { image_url: uri } }, ctx).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(message) });
      expect(ctx.stages).toEqual([]);
    }
  });

  it('refuses an image larger than the decoder limits as input_too_large', async () => {
    const small = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, limits: { imagePixels: 10_000 } });
    const ctx = fakeContext(await dirs.make());
    const run = small.run({ id: 'j', model: K1, request: { image_url: dataUri(await solidPng(200, 200, '#fff')) } }, ctx);
    await expect(run).rejects.toMatchObject({ code: 'input_too_large' });
    expect(ctx.stages).toEqual([]);
  });

  it('stops when cancelled during the render, with the signal’s reason and no model written', async () => {
    const reason = new Error('cancelled while rendering');
    // The abort lands once the render has started (the turn after `sampling` is reported).
    const ctx = fakeContext(await dirs.make(), {}, (stage) => {
      if (stage === 'sampling') setImmediate(() => ctx.controller.abort(reason));
    });
    const run = engine.run({ id: 'j', model: K1, request: { image_url: dataUri(sceneImage), face_limit: 200_000 } }, ctx);
    await expect(run).rejects.toBe(reason);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    expect(await readdir(ctx.outDir)).toEqual([]);
  });
});
