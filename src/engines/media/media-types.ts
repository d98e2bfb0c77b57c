/**
 * What an input's bytes are, read from their first bytes (magic numbers), never from the URL, the
 * data: URI's media type or a Content-Type: those are the client's word. A decoder is then handed
 * only bytes of a type the field accepts, with its demuxer or loader forced to that type, so a
 * playlist, concat list or SVG can never ask it to open something else.
 */

/** Video containers a video field accepts, with the ffmpeg demuxer each is read with. */
export type VideoContainer = 'mp4' | 'mov' | 'webm' | 'matroska';

export const VIDEO_DEMUXERS: Readonly<Record<VideoContainer, string>> = Object.freeze({
  // ISO-BMFF: one demuxer for both; external data references (drefs) stay disabled.
  mp4: 'mov',
  mov: 'mov',
  webm: 'matroska',
  matroska: 'matroska',
});

/**
 * The input options every ffprobe and ffmpeg run on an input video takes: only the `file`
 * protocol, the demuxer forced to the verified container, no external references (ISO-BMFF's
 * `enable_drefs` stays off), the path as a `file:` URL. Last among the options: `-i` ends them.
 */
export function demuxedInputArgs(path: string, demuxer: string): string[] {
  return ['-protocol_whitelist', 'file', ...(demuxer === 'mov' ? ['-enable_drefs', '0'] : []), '-f', demuxer, '-i', `file:${path}`];
}

/** Raster formats an image field accepts; names as sharp's `metadata().format` reports them. */
export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif' | 'heif';

export type Sniffed<T> = { readonly ok: true; readonly type: T } | { readonly ok: false; readonly what: string };

function ascii(bytes: Buffer, from: number, to: number): string {
  return bytes.toString('latin1', from, Math.min(to, bytes.length));
}

/** The ISO-BMFF `ftyp` major brand, when the file starts with an `ftyp` box. */
function ftypBrand(bytes: Buffer): string | undefined {
  return bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp' ? ascii(bytes, 8, 12) : undefined;
}

const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1']);
const AVIF_BRANDS = new Set(['avif', 'avis']);

function imageFormat(bytes: Buffer): ImageFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (ascii(bytes, 0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
  if (ascii(bytes, 0, 4) === 'II*\0' || ascii(bytes, 0, 4) === 'MM\0*') return 'tiff';
  const brand = ftypBrand(bytes);
  if (brand && AVIF_BRANDS.has(brand)) return 'avif';
  if (brand && HEIF_BRANDS.has(brand)) return 'heif';
  return undefined;
}

const IMAGE_NAMES: Readonly<Record<ImageFormat, string>> = {
  jpeg: 'a JPEG image',
  png: 'a PNG image',
  webp: 'a WebP image',
  gif: 'a GIF image',
  tiff: 'a TIFF image',
  avif: 'an AVIF image',
  heif: 'a HEIF image',
};

/** Top-level ISO-BMFF boxes a QuickTime file without `ftyp` may start with. */
const QUICKTIME_FIRST_BOXES = new Set(['moov', 'mdat', 'wide', 'free', 'skip']);

function videoContainer(bytes: Buffer): VideoContainer | undefined {
  const brand = ftypBrand(bytes);
  if (brand !== undefined) {
    if (AVIF_BRANDS.has(brand) || HEIF_BRANDS.has(brand)) return undefined;
    return brand === 'qt  ' ? 'mov' : 'mp4';
  }
  if (bytes.length >= 8 && QUICKTIME_FIRST_BOXES.has(ascii(bytes, 4, 8))) return 'mov';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) {
    // The EBML header names the DocType near its start: `webm` or `matroska`.
    return ascii(bytes, 0, 64).includes('webm') ? 'webm' : 'matroska';
  }
  return undefined;
}

/** Audio formats an asset may be. */
export type AudioFormat = 'wav' | 'mp3';

/** MPEG audio bit rates, kbit/s, by bit-rate index: MPEG-1 Layer III, then MPEG-2/2.5 Layer III. */
const MP3_KBPS = [
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
] as const;
const MP3_RATES = [
  [11025, 12000, 8000], // MPEG-2.5
  [0, 0, 0],
  [22050, 24000, 16000], // MPEG-2
  [44100, 48000, 32000], // MPEG-1
] as const;

/** The length of the MPEG-1/2/2.5 Layer III frame whose header is at `at`, or 0 if none is there. */
function mp3FrameLength(bytes: Buffer, at: number): number {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return 0;
  const version = (bytes[at + 1]! >> 3) & 3;
  const layer = (bytes[at + 1]! >> 1) & 3;
  const bitrate = bytes[at + 2]! >> 4;
  const rateIndex = (bytes[at + 2]! >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrate === 0 || bitrate === 15 || rateIndex === 3) return 0;
  const mpeg1 = version === 3;
  const kbps = MP3_KBPS[mpeg1 ? 0 : 1][bitrate]!;
  const padding = (bytes[at + 2]! >> 1) & 1;
  return Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / MP3_RATES[version]![rateIndex]!) + padding;
}

/**
 * MP3: an ID3v2 tag (`ID3`, its syncsafe size), or an MPEG Layer III frame header whose next
 * frame, when within `bytes`, starts with a header too (two sync words in a row rarely happen by
 * chance). A tag longer than `bytes` is taken on trust: ffprobe then reads the file as MP3 only.
 */
function isMp3(bytes: Buffer): boolean {
  let at = 0;
  if (ascii(bytes, 0, 3) === 'ID3' && bytes.length >= 10) {
    at = 10 + ((bytes[6]! & 0x7f) << 21) + ((bytes[7]! & 0x7f) << 14) + ((bytes[8]! & 0x7f) << 7) + (bytes[9]! & 0x7f);
    if (bytes[5]! & 0x10) at += 10; // footer
    while (at < bytes.length && bytes[at] === 0) at++; // padding after the tag
    if (at + 4 > bytes.length) return true;
  }
  const length = mp3FrameLength(bytes, at);
  if (length === 0) return false;
  return at + length + 4 > bytes.length || mp3FrameLength(bytes, at + length) > 0;
}

function audioFormat(bytes: Buffer): AudioFormat | undefined {
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WAVE') return 'wav';
  return isMp3(bytes) ? 'mp3' : undefined;
}

/** Binary glTF: the magic `glTF` (version and chunks are checked when the file is inspected). */
function isGlb(bytes: Buffer): boolean {
  return ascii(bytes, 0, 4) === 'glTF';
}

/**
 * Names formats that are refused by name because a decoder would follow what they contain:
 * playlists, concat lists, session descriptions, manifests, vector documents.
 */
function describeOther(bytes: Buffer): string {
  const image = imageFormat(bytes);
  if (image) return IMAGE_NAMES[image];
  if (videoContainer(bytes)) return 'a video file';
  const audio = audioFormat(bytes);
  if (audio) return audio === 'wav' ? 'a WAV audio file' : 'an MP3 audio file';
  if (isGlb(bytes)) return 'a GLB 3D model';
  // Text formats may start with a UTF-8 byte order mark and blank space.
  const text = ascii(bytes, 0, 512).replace(/^\xef\xbb\xbf/, '').trimStart();
  const head = text.slice(0, 64).toLowerCase();
  if (head.startsWith('#extm3u') || head.startsWith('#ext-x-') || head.startsWith('#extinf')) return 'an HLS playlist';
  if (head.startsWith('ffconcat')) return 'an ffmpeg concat list';
  if (/^(#[^\n]*\n\s*)*file\s+\S/.test(text.toLowerCase())) return 'an ffmpeg concat list';
  if (head.startsWith('[playlist]')) return 'a PLS playlist';
  if (/^v=0\r?\n/.test(text)) return 'an SDP session description';
  if (head.startsWith('%pdf')) return 'a PDF document';
  if (head.startsWith('%!ps')) return 'a PostScript document';
  if (/<svg[\s/>]/i.test(text)) return 'an SVG image';
  if (/<mpd[\s/>]/i.test(text)) return 'a DASH manifest';
  if (/<smil[\s/>]/i.test(text)) return 'a SMIL document';
  if (head.startsWith('<?xml')) return 'an XML document';
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'an HTML page';
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(head)) return 'a list of URLs';
  if (bytes.length === 0) return 'empty';
  if (isText(bytes.subarray(0, 512))) return 'a text file';
  return 'not a file type it accepts';
}

function isText(bytes: Buffer): boolean {
  for (const b of bytes) if (b < 0x09 || (b > 0x0d && b < 0x20) || b === 0x7f) return false;
  return true;
}

/** An accepted video container, or what the bytes are instead. */
export function sniffVideo(bytes: Buffer): Sniffed<VideoContainer> {
  const type = videoContainer(bytes);
  return type ? { ok: true, type } : { ok: false, what: describeOther(bytes) };
}

/** An accepted raster image format, or what the bytes are instead. */
export function sniffImage(bytes: Buffer): Sniffed<ImageFormat> {
  const type = imageFormat(bytes);
  return type ? { ok: true, type } : { ok: false, what: describeOther(bytes) };
}

/** `init_video is an HLS playlist, not a video file; send an MP4, MOV or WebM file`. */
export function notAVideo(field: string, what: string): string {
  const is = what === 'empty' ? 'is empty' : what === 'not a file type it accepts' ? 'is not a video file it accepts' : `is ${what}, not a video file`;
  return `${field} ${is}; send an MP4, MOV or WebM file`;
}

export function notAnImage(field: string, what: string): string {
  const is = what === 'empty' ? 'is empty' : what === 'not a file type it accepts' ? 'is not an image file it accepts' : `is ${what}, not a raster image`;
  return `${field} ${is}; send a JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF file`;
}

/** What an uploaded asset may be; each is stored as `asset.<type>` (docs/assets.md). */
export type AssetType = 'jpg' | 'png' | 'webp' | 'heic' | 'mp4' | 'mov' | 'webm' | 'glb' | 'wav' | 'mp3';

const ASSET_IMAGES: Partial<Record<ImageFormat, AssetType>> = { jpeg: 'jpg', png: 'png', webp: 'webp', heif: 'heic' };

/**
 * An accepted asset type, or what the bytes are instead. Images are judged first: their
 * signatures are the strictest, and HEIF shares ISO-BMFF's `ftyp` box with MP4 and MOV.
 */
export function sniffAsset(bytes: Buffer): Sniffed<AssetType> {
  const image = imageFormat(bytes);
  if (image) {
    const type = ASSET_IMAGES[image];
    return type ? { ok: true, type } : { ok: false, what: IMAGE_NAMES[image] };
  }
  const video = videoContainer(bytes);
  if (video) return video === 'matroska' ? { ok: false, what: 'a Matroska video' } : { ok: true, type: video };
  if (isGlb(bytes)) return { ok: true, type: 'glb' };
  const audio = audioFormat(bytes);
  return audio ? { ok: true, type: audio } : { ok: false, what: describeOther(bytes) };
}
