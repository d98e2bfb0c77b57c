import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';

/**
 * Asset files made for the inspection tests: a real HEIC (one HEVC frame from ffmpeg's libx265,
 * wrapped in HEIF boxes here, since this ffmpeg has no HEIF muxer) and a binary glTF built by hand.
 */

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

/** A FullBox: version and 24 bits of flags before the body. */
function fullBox(type: string, version: number, ...parts: Buffer[]): Buffer {
  return box(type, Buffer.from([version, 0, 0, 0]), ...parts);
}

function u8(...values: number[]): Buffer {
  return Buffer.from(values);
}

function u16(...values: number[]): Buffer {
  const b = Buffer.alloc(2 * values.length);
  values.forEach((v, i) => b.writeUInt16BE(v, 2 * i));
  return b;
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v, 4 * i));
  return b;
}

/** NAL units of an Annex B stream, start codes removed. */
function nalUnits(stream: Buffer): Buffer[] {
  const starts: number[] = [];
  for (let i = 0; i + 3 <= stream.length; i++) {
    if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      starts.push(i + 3);
      i += 2;
    }
  }
  return starts.map((start, n) => {
    let end = n + 1 < starts.length ? starts[n + 1]! - 3 : stream.length;
    while (end > start && stream[end - 1] === 0) end--; // the zero byte of a 4-byte start code
    return stream.subarray(start, end);
  });
}

const nalType = (nal: Buffer) => (nal[0]! >> 1) & 0x3f;

/** Drops the emulation-prevention byte of each 00 00 03 sequence. */
function unescape(nal: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    out.push(nal[i]!);
  }
  return Buffer.from(out);
}

/** The HEVC decoder configuration (ISO/IEC 14496-15 hvcC) of a stream's VPS, SPS and PPS. */
function hvcC(params: Buffer[]): Buffer {
  const sps = unescape(params.find((n) => nalType(n) === 33)!);
  // After the 2-byte NAL header and one byte of ids: profile space/tier/idc, 4 bytes of
  // compatibility flags, 6 of constraint flags, level: the 12 bytes hvcC repeats.
  const profile = sps.subarray(3, 15);
  const arrays = [32, 33, 34].map((type) => {
    const nals = params.filter((n) => nalType(n) === type);
    return Buffer.concat([u8(0x80 | type), u16(nals.length), ...nals.flatMap((n) => [u16(n.length), n])]);
  });
  // min spatial segmentation 0, parallelism 0, 4:2:0, 8-bit, no frame rate, 4-byte NAL lengths.
  return box('hvcC', u8(1), profile, u16(0xf000), u8(0xfc, 0xfd, 0xf8, 0xf8), u16(0), u8(0x0f, arrays.length), ...arrays);
}

/** A real HEIC still of `width` x `height`: one HEVC-coded item, its hvcC and ispe properties. */
export async function heicImage(dir: string, width: number, height: number): Promise<Buffer> {
  const hevc = join(dir, 'still.hevc');
  await runFfmpeg(
    ['-f', 'lavfi', '-i', `testsrc2=s=${width}x${height}`, '-frames:v', '1', '-pix_fmt', 'yuv420p', '-c:v', 'libx265', '-x265-params', 'log-level=none', '-f', 'hevc', hevc],
    { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
  );
  const nals = nalUnits(await readFile(hevc));
  const params = nals.filter((n) => [32, 33, 34].includes(nalType(n)));
  const data = Buffer.concat(nals.filter((n) => nalType(n) < 32).flatMap((n) => [u32(n.length), n]));

  const ftyp = box('ftyp', Buffer.from('heic', 'latin1'), u32(0), Buffer.from('mif1heic', 'latin1'));
  const meta = (offset: number) =>
    fullBox(
      'meta', 0,
      fullBox('hdlr', 0, u32(0), Buffer.from('pict', 'latin1'), u32(0, 0, 0), u8(0)),
      fullBox('pitm', 0, u16(1)),
      fullBox('iinf', 0, u16(1), fullBox('infe', 2, u16(1, 0), Buffer.from('hvc1', 'latin1'), u8(0))),
      box('iprp', box('ipco', hvcC(params), fullBox('ispe', 0, u32(width, height))), fullBox('ipma', 0, u32(1), u16(1), u8(2, 0x81, 0x02))),
      fullBox('iloc', 0, u8(0x44, 0x00), u16(1, 1, 0, 1), u32(offset, data.length)),
    );
  const dataAt = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(dataAt), box('mdat', data)]);
}

/**
 * A binary glTF 2.0 file (glTF spec, "GLB File Format"): header, JSON chunk padded with spaces,
 * then a BIN chunk padded with zeros when `bin` is given.
 */
export function glbModel(json: object, bin?: Buffer): Buffer {
  const pad = (buf: Buffer, fill: number) => Buffer.concat([buf, Buffer.alloc((4 - (buf.length % 4)) % 4, fill)]);
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(data.length, 0);
    head.write(type, 4, 'latin1');
    return Buffer.concat([head, data]);
  };
  const chunks = [chunk('JSON', pad(Buffer.from(JSON.stringify(json)), 0x20)), ...(bin ? [chunk('BIN\0', pad(bin, 0))] : [])];
  const header = Buffer.alloc(12);
  header.write('glTF', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + chunks.reduce((n, c) => n + c.length, 0), 8);
  return Buffer.concat([header, ...chunks]);
}

/** One triangle: three float positions in the BIN chunk, the JSON describing them. */
export function triangleGlb(): Buffer {
  const positions = Buffer.alloc(36);
  [0, 0, 0, 1, 0, 0, 0, 1, 0].forEach((v, i) => positions.writeFloatLE(v, i * 4));
  return glbModel(
    {
      asset: { version: '2.0', generator: 'mediagen tests' },
      scene: 0,
      scenes: [{ nodes: [0] }],
      nodes: [{ mesh: 0 }],
      meshes: [{ primitives: [{ attributes: { POSITION: 0 } }] }],
      buffers: [{ byteLength: 36 }],
      bufferViews: [{ buffer: 0, byteLength: 36 }],
      accessors: [{ bufferView: 0, componentType: 5126, count: 3, type: 'VEC3', min: [0, 0, 0], max: [1, 1, 0] }],
    },
    positions,
  );
}

/** Runs ffmpeg with `args` (inputs and options) writing `dir/name`; resolves with that path. */
export async function ffmpegFile(dir: string, name: string, args: readonly string[]): Promise<string> {
  const out = join(dir, name);
  await runFfmpeg([...args, out], { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() });
  return out;
}

/** `seconds` of 64 x 48 test pattern at 24 fps, and a tone. */
export const LAVFI_VIDEO = (seconds: number) => ['-f', 'lavfi', '-i', `testsrc2=s=64x48:r=24:d=${seconds}`];
export const LAVFI_TONE = (seconds: number) => ['-f', 'lavfi', '-i', `sine=f=440:r=44100:d=${seconds}`];
