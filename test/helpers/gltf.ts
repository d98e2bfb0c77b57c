import validator from 'gltf-validator';
import type { ValidationReport } from 'gltf-validator';

/**
 * Binary glTF read back for the tests: the chunks, the JSON, and accessors decoded from the BIN
 * chunk, independently of the writer (src/engines/local/mesh/gltf.ts); and the Khronos validator.
 */

export interface Glb {
  readonly version: number;
  readonly length: number;
  readonly json: GltfJson;
  readonly bin: Buffer;
}

export interface GltfJson {
  readonly asset: { readonly version: string };
  readonly meshes: Array<{ primitives: Array<{ attributes: Record<string, number>; indices: number; material: number; mode?: number }> }>;
  readonly accessors: Array<{ bufferView: number; componentType: number; count: number; type: string; min?: number[]; max?: number[] }>;
  readonly bufferViews: Array<{ buffer: number; byteOffset?: number; byteLength: number; byteStride?: number; target?: number }>;
  readonly materials: Array<{ pbrMetallicRoughness: { baseColorFactor?: number[]; baseColorTexture?: { index: number } } }>;
  readonly images?: Array<{ bufferView: number; mimeType: string }>;
  readonly textures?: Array<{ source: number; sampler?: number }>;
  readonly samplers?: unknown[];
}

export function readGlb(bytes: Buffer): Glb {
  if (bytes.readUInt32LE(0) !== 0x46546c67) throw new Error('not a GLB: no glTF magic');
  const jsonLength = bytes.readUInt32LE(12);
  if (bytes.readUInt32LE(16) !== 0x4e4f534a) throw new Error('the first chunk is not JSON');
  const json = JSON.parse(bytes.toString('utf8', 20, 20 + jsonLength)) as GltfJson;
  const binAt = 20 + jsonLength;
  const bin = binAt < bytes.length ? bytes.subarray(binAt + 8, binAt + 8 + bytes.readUInt32LE(binAt)) : Buffer.alloc(0);
  if (binAt < bytes.length && bytes.readUInt32LE(binAt + 4) !== 0x004e4942) throw new Error('the second chunk is not BIN');
  return { version: bytes.readUInt32LE(4), length: bytes.readUInt32LE(8), json, bin };
}

const COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4 };

/** An accessor's values as numbers, read from the BIN chunk (tightly packed views only). */
export function accessorValues(glb: Glb, index: number): number[] {
  const a = glb.json.accessors[index]!;
  const view = glb.json.bufferViews[a.bufferView]!;
  const n = a.count * COMPONENTS[a.type]!;
  const at = view.byteOffset ?? 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (a.componentType === 5126) out.push(glb.bin.readFloatLE(at + 4 * i));
    else if (a.componentType === 5125) out.push(glb.bin.readUInt32LE(at + 4 * i));
    else if (a.componentType === 5123) out.push(glb.bin.readUInt16LE(at + 2 * i));
    else throw new Error(`component type ${a.componentType} not read here`);
  }
  return out;
}

/** The bytes a bufferView addresses (an embedded image, say). */
export function viewBytes(glb: Glb, view: number): Buffer {
  const v = glb.json.bufferViews[view]!;
  return glb.bin.subarray(v.byteOffset ?? 0, (v.byteOffset ?? 0) + v.byteLength);
}

/** The Khronos validator's report on the file, every issue listed. */
export function validateGlb(bytes: Buffer): Promise<ValidationReport> {
  return validator.validateBytes(new Uint8Array(bytes), { maxIssues: 0 });
}
