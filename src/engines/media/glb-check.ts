import type { FileHandle } from 'node:fs/promises';
import { readAt } from './container-checks.js';
import { ClaimError } from './media-claims.js';

/**
 * Binary glTF 2.0 (GLB), checked by reading its framing and JSON: nothing decodes a model here.
 * Layout (glTF 2.0 spec, "GLB File Format"): a 12-byte header (magic `glTF`, version, total
 * length), then chunks of (length, type, data), the first of type `JSON`, an optional `BIN\0`.
 */

/** The largest JSON chunk read: a real model's JSON is KBs to a few MB; its bulk is in BIN. */
export const MAX_GLB_JSON_BYTES = 16 * 1024 * 1024;

const invalid = (why: string) => new ClaimError('invalid', why);

interface GltfJson {
  asset?: { version?: unknown };
  buffers?: { uri?: unknown; byteLength?: unknown }[];
  images?: { uri?: unknown }[];
}

/**
 * Checks the GLB at `file` of `size` bytes: version 2, declared length equal to the file's, every
 * chunk inside it, the JSON chunk first (at most MAX_GLB_JSON_BYTES, else `too_large`) and
 * parsing to an object with `asset.version` 2.x, and the model whole: no buffer or image read
 * from outside the file (a stored asset could not supply it), the embedded buffer present.
 */
export async function checkGlb(file: FileHandle, size: number): Promise<void> {
  const header = await readAt(file, 0, 20);
  if (header.length < 12) throw invalid('it ends inside its header');
  const version = header.readUInt32LE(4);
  if (version !== 2) throw invalid(`it is binary glTF version ${version}; only version 2 is accepted`);
  const declared = header.readUInt32LE(8);
  if (declared > size) throw invalid(`it declares ${declared} bytes but has ${size}`);
  if (declared < size) throw invalid(`it has ${size - declared} bytes after its declared end`);
  if (header.length < 20) throw invalid('it has no JSON chunk');
  const jsonLength = header.readUInt32LE(12);
  if (header.toString('latin1', 16, 20) !== 'JSON') throw invalid('its first chunk is not JSON');
  if (20 + jsonLength > size) throw invalid('its JSON chunk runs past the end of the file');
  if (jsonLength > MAX_GLB_JSON_BYTES) {
    throw new ClaimError('too_large', `has a JSON chunk of ${jsonLength} bytes; at most ${MAX_GLB_JSON_BYTES} are accepted`);
  }

  let json: GltfJson;
  try {
    const parsed: unknown = JSON.parse((await readAt(file, 20, jsonLength)).toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    json = parsed as GltfJson;
  } catch (err) {
    throw new ClaimError('invalid', 'its JSON chunk is not a JSON object', err);
  }
  const assetVersion = json.asset?.version;
  if (typeof assetVersion !== 'string') throw invalid('its JSON has no asset.version');
  if (!/^2\.\d+$/.test(assetVersion)) throw invalid(`it is glTF ${assetVersion.slice(0, 16)}; only glTF 2.x is accepted`);

  // The remaining chunks: each inside the file; the binary one (`BIN\0`) noted.
  let binLength: number | undefined;
  for (let at = 20 + jsonLength, n = 0; at < size; n++) {
    if (n >= 10_000) throw invalid('it has more than 10000 chunks');
    const head = await readAt(file, at, 8);
    if (head.length < 8) throw invalid('it ends inside a chunk header');
    const length = head.readUInt32LE(0);
    if (at + 8 + length > size) throw invalid('a chunk runs past the end of the file');
    if (n === 0 && head.toString('latin1', 4, 8) === 'BIN\0') binLength = length;
    at += 8 + length;
  }
  checkWhole(json, binLength);
}

function checkWhole(json: GltfJson, binLength: number | undefined): void {
  const outside = (list: { uri?: unknown }[] | undefined, name: string) =>
    (Array.isArray(list) ? list : []).findIndex((item) => typeof item?.uri === 'string' && !item.uri.startsWith('data:')) >= 0 ? name : undefined;
  const external = outside(json.buffers, 'buffers') ?? outside(json.images, 'images');
  if (external) throw invalid(`its ${external} refer to files outside it; upload a self-contained GLB`);
  const embedded = Array.isArray(json.buffers) ? json.buffers.find((b) => b?.uri === undefined) : undefined;
  if (embedded) {
    if (binLength === undefined) throw invalid('its buffer has no BIN chunk');
    if (typeof embedded.byteLength === 'number' && embedded.byteLength > binLength) {
      throw invalid('its BIN chunk is shorter than its buffer claims');
    }
  }
}
