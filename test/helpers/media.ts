/**
 * Media checked by reading the files (design.md): image sizes from PNG and JPEG headers, and an
 * MP4's duration, tracks, codecs, frame size and chroma format from its boxes. No ffprobe needed.
 */

export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(buf: Buffer): boolean {
  return buf.subarray(0, 8).equals(PNG_SIGNATURE);
}

export function isJpeg(buf: Buffer): boolean {
  return buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff;
}

/** The size in the IHDR chunk, which the PNG format requires to come first. */
export function readPngSize(buf: Buffer): ImageSize {
  if (!isPng(buf) || buf.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** The size in the first start-of-frame marker (SOF0..SOF15, not DHT, JPG or DAC). */
export function readJpegSize(buf: Buffer): ImageSize {
  if (!isJpeg(buf)) throw new Error('not a JPEG');
  let at = 2;
  while (at + 4 <= buf.length) {
    if (buf[at] !== 0xff) throw new Error(`JPEG: no marker at ${at}`);
    const marker = buf[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    const length = buf.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: buf.readUInt16BE(at + 5), width: buf.readUInt16BE(at + 7) };
    }
    if (marker === 0xda) break; // scan data: every SOF comes before it
    at += 2 + length;
  }
  throw new Error('JPEG: no start-of-frame marker');
}

export type TrackKind = 'video' | 'audio' | 'other';

export interface Mp4Track {
  readonly kind: TrackKind;
  /** The hdlr handler type: `vide`, `soun`, ... */
  readonly handler: string;
  /** The first sample entry of stsd: `avc1`, `mp4a`, ... */
  readonly codec: string;
  /** Video: from the sample entry (tkhd as fallback); audio: 0. */
  readonly width: number;
  readonly height: number;
  /** Media duration (mdhd); for AAC this includes the encoder's priming samples. */
  readonly durationSec: number;
  /** Presentation duration (tkhd, in the movie timescale), after edit lists. */
  readonly presentationSec: number;
  /** Number of samples (stsz): frames for video, AAC packets for audio. */
  readonly samples: number;
  /** avc1 only: H.264 profile and chroma format (1 = 4:2:0) and luma bit depth, from avcC/SPS. */
  readonly avc?: { readonly profile: number; readonly chromaFormat: number; readonly bitDepth: number };
  /** mp4a only. */
  readonly sampleRate?: number;
  readonly channels?: number;
}

export interface Mp4Info {
  /** mvhd: the movie's presentation duration. */
  readonly durationSec: number;
  readonly tracks: readonly Mp4Track[];
}

interface Box {
  readonly type: string;
  /** The box body, header excluded. */
  readonly body: Buffer;
}

function boxes(buf: Buffer): Box[] {
  const out: Box[] = [];
  let at = 0;
  while (at + 8 <= buf.length) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = buf.length - at;
    }
    if (size < header || at + size > buf.length) throw new Error(`MP4: box ${type} overruns its parent`);
    out.push({ type, body: buf.subarray(at + header, at + size) });
    at += size;
  }
  return out;
}

function child(parent: Buffer, type: string): Buffer {
  const found = boxes(parent).find((b) => b.type === type);
  if (!found) throw new Error(`MP4: no ${type} box`);
  return found.body;
}

function path(parent: Buffer, ...types: string[]): Buffer {
  return types.reduce(child, parent);
}

/** mvhd and mdhd share a layout: version, then times, timescale and duration (32 or 64 bits). */
function timescaleDuration(body: Buffer): [number, number] {
  return body[0] === 1
    ? [body.readUInt32BE(20), Number(body.readBigUInt64BE(24))]
    : [body.readUInt32BE(12), body.readUInt32BE(16)];
}

export function readMp4Info(buf: Buffer): Mp4Info {
  const moov = child(buf, 'moov');
  const [movieScale, movieDuration] = timescaleDuration(child(moov, 'mvhd'));
  const tracks = boxes(moov)
    .filter((b) => b.type === 'trak')
    .map((trak) => readTrack(trak.body, movieScale));
  return { durationSec: movieDuration / movieScale, tracks };
}

function readTrack(trak: Buffer, movieScale: number): Mp4Track {
  const tkhd = child(trak, 'tkhd');
  const v1 = tkhd[0] === 1;
  const tkhdDuration = v1 ? Number(tkhd.readBigUInt64BE(28)) : tkhd.readUInt32BE(20);
  const dims = v1 ? 88 : 76;
  const [tkWidth, tkHeight] = [tkhd.readUInt32BE(dims) / 65536, tkhd.readUInt32BE(dims + 4) / 65536];
  const mdia = child(trak, 'mdia');
  const [scale, duration] = timescaleDuration(child(mdia, 'mdhd'));
  const handler = child(mdia, 'hdlr').toString('latin1', 8, 12);
  const stbl = path(mdia, 'minf', 'stbl');
  const stsd = child(stbl, 'stsd');
  const [entry] = boxes(stsd.subarray(8));
  if (!entry) throw new Error('MP4: empty stsd');
  const kind: TrackKind = handler === 'vide' ? 'video' : handler === 'soun' ? 'audio' : 'other';
  const base = {
    kind,
    handler,
    codec: entry.type,
    durationSec: duration / scale,
    presentationSec: tkhdDuration / movieScale,
    samples: child(stbl, 'stsz').readUInt32BE(8),
  };
  if (kind === 'video') {
    // Visual sample entry: 8 bytes of SampleEntry, 16 reserved, then width and height.
    const width = entry.body.readUInt16BE(24) || tkWidth;
    const height = entry.body.readUInt16BE(26) || tkHeight;
    const avc = entry.type === 'avc1' ? readAvcC(child(entry.body.subarray(78), 'avcC')) : undefined;
    return { ...base, width, height, ...(avc ? { avc } : {}) };
  }
  if (kind === 'audio') {
    // Audio sample entry: 8 bytes of SampleEntry, 8 reserved, channels, sample size, 4 reserved, rate.
    // MP4 files may write 2 channels there whatever the stream has; AAC's own config knows.
    const sampleRate = entry.body.readUInt32BE(24) / 65536;
    const esds = entry.type === 'mp4a' ? boxes(entry.body.subarray(28)).find((b) => b.type === 'esds') : undefined;
    const channels = (esds && aacChannels(esds.body)) || entry.body.readUInt16BE(16);
    return { ...base, width: 0, height: 0, channels, sampleRate };
  }
  return { ...base, width: tkWidth, height: tkHeight };
}

/** Profile from avcC; chroma format and bit depth from the SPS (4:2:0, 8-bit below High). */
function readAvcC(avcC: Buffer): { profile: number; chromaFormat: number; bitDepth: number } {
  const profile = avcC[1]!;
  const spsLength = avcC.readUInt16BE(6);
  const sps = unescapeNal(avcC.subarray(8, 8 + spsLength));
  const bits = new BitReader(sps.subarray(4)); // NAL header, profile, constraints, level
  bits.ue(); // seq_parameter_set_id
  let chromaFormat = 1;
  let bitDepth = 8;
  if ([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].includes(profile)) {
    chromaFormat = bits.ue();
    if (chromaFormat === 3) bits.bit(); // separate_colour_plane_flag
    bitDepth = 8 + bits.ue();
  }
  return { profile, chromaFormat, bitDepth };
}

/**
 * The channel configuration in an esds box's AudioSpecificConfig, reached through the ES and
 * DecoderConfig descriptors; undefined when the layout is not the plain one ffmpeg writes.
 */
function aacChannels(esds: Buffer): number | undefined {
  let at = 4; // version and flags
  const descriptor = (tag: number): boolean => {
    if (esds[at] !== tag) return false;
    at++;
    // Sizes are 1 to 4 bytes of 7 bits, the high bit meaning "more".
    let more = true;
    for (let i = 0; i < 4 && more; i++) more = (esds[at++]! & 0x80) !== 0;
    return true;
  };
  if (!descriptor(0x03)) return undefined;
  const flags = esds[at + 2]!;
  at += 3 + (flags & 0x80 ? 2 : 0) + (flags & 0x20 ? 3 : 0);
  if (flags & 0x40) at += 1 + esds[at]!; // URL
  if (!descriptor(0x04)) return undefined;
  at += 13;
  if (!descriptor(0x05)) return undefined;
  // AudioSpecificConfig: 5 bits object type, 4 bits frequency index (+24 bits if 15), 4 bits channels.
  const bits = new BitReader(esds.subarray(at));
  bits.read(5);
  if (bits.read(4) === 15) bits.read(24);
  return bits.read(4);
}

/** Drops the emulation-prevention byte of each 00 00 03 sequence. */
function unescapeNal(nal: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    out.push(nal[i]!);
  }
  return Buffer.from(out);
}

class BitReader {
  readonly #buf: Buffer;
  #pos = 0;
  constructor(buf: Buffer) {
    this.#buf = buf;
  }
  bit(): number {
    const byte = this.#buf[this.#pos >> 3];
    if (byte === undefined) throw new Error('SPS: out of bits');
    const b = (byte >> (7 - (this.#pos & 7))) & 1;
    this.#pos++;
    return b;
  }
  read(n: number): number {
    let value = 0;
    for (let i = 0; i < n; i++) value = value * 2 + this.bit();
    return value;
  }
  /** Unsigned Exp-Golomb. */
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) zeros++;
    return 2 ** zeros - 1 + this.read(zeros);
  }
}

/** True when the video track is H.264 with 8-bit 4:2:0 samples, which is what `yuv420p` encodes. */
export function isYuv420p8(track: Mp4Track): boolean {
  return track.codec === 'avc1' && track.avc?.chromaFormat === 1 && track.avc.bitDepth === 8;
}
