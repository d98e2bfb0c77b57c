import type { FileHandle } from 'node:fs/promises';
import { ClaimError } from './media-claims.js';

/**
 * Cheap structural checks of a file the server wrote, made before ffprobe or ffmpeg read it: the
 * framing every container declares up front (box, element and chunk sizes) must fit in the file.
 * An upload cut short fails here at the cost of a few small reads, whatever its length. Each
 * check reads through `file` only and throws ClaimError (`invalid`, saying what does not fit).
 */

/** A file of this many top-level boxes, elements or chunks is not a real upload: refused. */
const MAX_TOP_LEVEL = 10_000;

/** Up to `length` bytes of `file` from offset `at` (fewer at its end). */
export async function readAt(file: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, at);
  return buf.subarray(0, bytesRead);
}

const invalid = (why: string) => new ClaimError('invalid', why);

/** A box or chunk type as it may be shown: four printable characters, else a neutral word. */
function label(type: string, kind: string): string {
  return /^[\x20-\x7e]{4}$/.test(type) ? `${type.trim()} ${kind}` : kind;
}

function tooMany(count: number): void {
  if (count >= MAX_TOP_LEVEL) throw invalid(`it has more than ${MAX_TOP_LEVEL} top-level parts`);
}

/** ISO-BMFF (MP4, MOV): every top-level box fits in the file, and one of them is `moov`. */
export async function checkIsoBmff(file: FileHandle, size: number): Promise<void> {
  let moov = false;
  for (let at = 0, n = 0; at < size; n++) {
    tooMany(n);
    const head = await readAt(file, at, 16);
    if (head.length < 8) throw invalid('it ends inside a box header');
    const type = head.toString('latin1', 4, 8);
    let length = head.readUInt32BE(0);
    let header = 8;
    if (length === 1) {
      if (head.length < 16) throw invalid('it ends inside a box header');
      length = Number(head.readBigUInt64BE(8));
      header = 16;
    } else if (length === 0) {
      length = size - at; // "to the end of the file"
    }
    if (length < header) throw invalid(`its ${label(type, 'box')} has a bad size`);
    if (at + length > size) throw invalid(`its ${label(type, 'box')} runs past the end of the file`);
    moov ||= type === 'moov';
    at += length;
  }
  if (!moov) throw invalid('it has no moov box');
}

/** An EBML variable-length integer at `at`: its length in bytes and value (marker bit removed). */
function vint(buf: Buffer, at: number): { length: number; value: number; unknown: boolean } | undefined {
  const first = buf[at];
  if (first === undefined || first === 0) return undefined;
  const length = Math.clz32(first) - 23;
  if (at + length > buf.length) return undefined;
  let value = first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + buf[at + i]!;
    allOnes &&= buf[at + i] === 0xff;
  }
  return { length, value, unknown: allOnes };
}

const EBML_ID = 0x1a45dfa3;
const SEGMENT_ID = 0x18538067;

/**
 * WebM (EBML): the top-level elements before the Segment fit, and the Segment's declared size
 * fits unless it is "unknown" (a live recording's, legal and then judged by decoding).
 */
export async function checkEbml(file: FileHandle, size: number): Promise<void> {
  for (let at = 0, n = 0; at < size; n++) {
    tooMany(n);
    const head = await readAt(file, at, 12);
    const id = vint(head, 0);
    const length = id && vint(head, id.length);
    if (!id || !length) throw invalid('it ends inside an element header');
    if (id.length > 4) throw invalid('it has an element with a bad ID');
    const idValue = head.readUIntBE(0, id.length);
    if (n === 0 && idValue !== EBML_ID) throw invalid('it does not start with an EBML header');
    const body = at + id.length + length.length;
    if (idValue === SEGMENT_ID) {
      if (!length.unknown && body + length.value > size) throw invalid('its Segment runs past the end of the file');
      return;
    }
    if (length.unknown || body + length.value > size) throw invalid('an element before its Segment runs past the end of the file');
    at = body + length.value;
  }
  throw invalid('it has no Segment');
}

/** RIFF sizes that mean "unknown" (a stream written without seeking back). */
const UNKNOWN_RIFF_SIZE = new Set([0, 0xffffffff]);

/** WAV (RIFF): the RIFF size fits, and so does every chunk up to and including `data`. */
export async function checkWav(file: FileHandle, size: number): Promise<void> {
  const riff = (await readAt(file, 4, 4)).readUInt32LE(0);
  if (!UNKNOWN_RIFF_SIZE.has(riff) && 8 + riff > size) throw invalid('its RIFF chunk runs past the end of the file');
  for (let at = 12, n = 0; ; n++) {
    tooMany(n);
    const head = await readAt(file, at, 8);
    if (head.length < 8) throw invalid('it has no data chunk');
    const type = head.toString('latin1', 0, 4);
    const length = head.readUInt32LE(4);
    if (type === 'data') {
      if (length !== 0xffffffff && at + 8 + length > size) throw invalid('its data chunk runs past the end of the file');
      return;
    }
    // Chunks are padded to an even length.
    const next = at + 8 + length + (length & 1);
    if (next > size) throw invalid(`its ${label(type, 'chunk')} runs past the end of the file`);
    at = next;
  }
}

/** MP3: a leading ID3v2 tag fits (MPEG frames carry no sizes; decoding judges them). */
export async function checkMp3(file: FileHandle, size: number): Promise<void> {
  const head = await readAt(file, 0, 10);
  if (head.toString('latin1', 0, 3) !== 'ID3' || head.length < 10) return;
  const tag = ((head[6]! & 0x7f) << 21) + ((head[7]! & 0x7f) << 14) + ((head[8]! & 0x7f) << 7) + (head[9]! & 0x7f);
  if (10 + tag > size) throw invalid('its ID3 tag runs past the end of the file');
}
