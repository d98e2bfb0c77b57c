/**
 * A binary glTF 2.0 writer for one triangle mesh with one material: what the 3D models output.
 * The layout is the plainest the Khronos validator accepts without a warning: one tightly packed
 * bufferView per attribute (so no byteStride), every view 4-byte aligned, min/max on every vertex
 * accessor, 16-bit indices when they fit, and the texture's PNG in the BIN chunk.
 */

export interface TriangleMesh {
  /** x, y, z per vertex, in metres, glTF's +Y up and +Z towards the viewer. */
  readonly positions: Float32Array;
  /** Unit normals, one per vertex. */
  readonly normals: Float32Array;
  /** u, v per vertex (origin at the image's top left); only with a texture. */
  readonly uvs?: Float32Array;
  /** Three vertex indices per triangle, counter-clockwise seen from outside. */
  readonly indices: Uint32Array;
}

export interface MeshMaterial {
  readonly name: string;
  /** The base colour texture as PNG bytes; its colours are sRGB. */
  readonly texturePng?: Buffer;
  /** Linear RGBA; multiplies the texture when there is one. */
  readonly baseColorFactor: readonly [number, number, number, number];
  readonly roughness: number;
}

const GLB_MAGIC = 0x46546c67; // 'glTF'
const CHUNK_JSON = 0x4e4f534a;
const CHUNK_BIN = 0x004e4942;
const FLOAT = 5126;
const UNSIGNED_SHORT = 5123;
const UNSIGNED_INT = 5125;
const ARRAY_BUFFER = 34962;
const ELEMENT_ARRAY_BUFFER = 34963;
const TRIANGLES = 4;
const LINEAR = 9729;
const LINEAR_MIPMAP_LINEAR = 9987;
const CLAMP_TO_EDGE = 33071;

const pad4 = (n: number) => (n + 3) & ~3;

/** Per-component min and max of `values` read as vectors of `size`: the exact float32 values. */
function bounds(values: Float32Array, size: number): { min: number[]; max: number[] } {
  const min = new Array<number>(size).fill(Infinity);
  const max = new Array<number>(size).fill(-Infinity);
  for (let i = 0; i < values.length; i++) {
    const c = i % size;
    const v = values[i]!;
    if (v < min[c]!) min[c] = v;
    if (v > max[c]!) max[c] = v;
  }
  return { min, max };
}

/** Collects the BIN chunk's parts and the bufferViews that address them. */
class BinBuilder {
  readonly parts: Buffer[] = [];
  readonly views: Record<string, number>[] = [];
  #length = 0;

  add(bytes: Uint8Array, target?: number): number {
    const view: Record<string, number> = { buffer: 0, byteOffset: this.#length, byteLength: bytes.byteLength };
    if (target !== undefined) view.target = target;
    const padded = pad4(bytes.byteLength);
    this.parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    if (padded > bytes.byteLength) this.parts.push(Buffer.alloc(padded - bytes.byteLength));
    this.#length += padded;
    return this.views.push(view) - 1;
  }

  get length(): number {
    return this.#length;
  }
}

export function encodeGlb(mesh: TriangleMesh, material: MeshMaterial, generator: string): Buffer {
  const vertexCount = mesh.positions.length / 3;
  if (mesh.normals.length !== vertexCount * 3 || (mesh.uvs && mesh.uvs.length !== vertexCount * 2) || mesh.indices.length % 3 !== 0) {
    throw new Error('encodeGlb: attribute lengths disagree');
  }
  const bin = new BinBuilder();
  const accessors: Record<string, unknown>[] = [];
  const vertexAccessor = (values: Float32Array, type: 'VEC2' | 'VEC3', size: number) => {
    const bufferView = bin.add(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), ARRAY_BUFFER);
    return accessors.push({ bufferView, componentType: FLOAT, count: vertexCount, type, ...bounds(values, size) }) - 1;
  };
  const attributes: Record<string, number> = {
    POSITION: vertexAccessor(mesh.positions, 'VEC3', 3),
    NORMAL: vertexAccessor(mesh.normals, 'VEC3', 3),
  };
  if (mesh.uvs) attributes.TEXCOORD_0 = vertexAccessor(mesh.uvs, 'VEC2', 2);

  // 65535 is the primitive-restart value, which glTF forbids as an index.
  const short = vertexCount <= 65535;
  const indexArray = short ? Uint16Array.from(mesh.indices) : mesh.indices;
  const indexView = bin.add(new Uint8Array(indexArray.buffer, indexArray.byteOffset, indexArray.byteLength), ELEMENT_ARRAY_BUFFER);
  let maxIndex = 0;
  for (const i of mesh.indices) if (i > maxIndex) maxIndex = i;
  const indices = accessors.push({ bufferView: indexView, componentType: short ? UNSIGNED_SHORT : UNSIGNED_INT, count: mesh.indices.length, type: 'SCALAR', min: [0], max: [maxIndex] }) - 1;

  const pbr: Record<string, unknown> = { baseColorFactor: [...material.baseColorFactor], metallicFactor: 0, roughnessFactor: material.roughness };
  const textured: Record<string, unknown> = {};
  if (material.texturePng) {
    const image = bin.add(material.texturePng);
    pbr.baseColorTexture = { index: 0 };
    Object.assign(textured, {
      images: [{ bufferView: image, mimeType: 'image/png' }],
      samplers: [{ magFilter: LINEAR, minFilter: LINEAR_MIPMAP_LINEAR, wrapS: CLAMP_TO_EDGE, wrapT: CLAMP_TO_EDGE }],
      textures: [{ sampler: 0, source: 0 }],
    });
  }

  const json = {
    asset: { version: '2.0', generator },
    scene: 0,
    scenes: [{ nodes: [0] }],
    nodes: [{ mesh: 0, name: material.name }],
    meshes: [{ name: material.name, primitives: [{ attributes, indices, material: 0, mode: TRIANGLES }] }],
    materials: [{ name: material.name, pbrMetallicRoughness: pbr, doubleSided: false }],
    ...textured,
    accessors,
    bufferViews: bin.views,
    buffers: [{ byteLength: bin.length }],
  };
  const jsonBytes = Buffer.from(JSON.stringify(json), 'utf8');
  // The JSON chunk is padded with spaces, the BIN chunk with zeros (the GLB rules).
  const jsonChunk = Buffer.concat([jsonBytes, Buffer.alloc(pad4(jsonBytes.length) - jsonBytes.length, 0x20)]);
  const total = 12 + 8 + jsonChunk.length + 8 + bin.length;
  const header = Buffer.alloc(12);
  header.writeUInt32LE(GLB_MAGIC, 0);
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(total, 8);
  return Buffer.concat([header, chunkHeader(jsonChunk.length, CHUNK_JSON), jsonChunk, chunkHeader(bin.length, CHUNK_BIN), ...bin.parts]);
}

function chunkHeader(length: number, type: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(length, 0);
  b.writeUInt32LE(type, 4);
  return b;
}
