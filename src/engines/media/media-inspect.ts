import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import sharp from 'sharp';
import { checkEbml, checkIsoBmff, checkMp3, checkWav, readAt } from './container-checks.js';
import { DecodeBudgetError, FfmpegError, runFfmpeg } from './ffmpeg.js';
import { probeFile } from './ffprobe.js';
import { checkGlb } from './glb-check.js';
import { ClaimError, checkAudioClaims, checkVideoClaims, readImageHeader } from './media-claims.js';
import { decodeBudget, seconds } from './media-limits.js';
import type { MediaLimits } from './media-limits.js';
import { contentTypeOf } from '../../outputs/output-store.js';
import { demuxedInputArgs, sniffAsset } from './media-types.js';
import type { AssetType, ImageFormat } from './media-types.js';

/**
 * What an uploaded file is, and whether it may be kept as an asset (docs/assets.md). The type
 * comes from the file's bytes, never its name or Content-Type. Then, cheapest first: the framing
 * the container declares must fit in the file; the claims in its headers (pixels, duration,
 * frames, streams) must be within the limits; and it must decode whole (images with sharp,
 * sound and video with ffmpeg under the decode budget), so a truncated or damaged file is
 * refused at upload, not when a job reads it. Decoders read only the file given, as its sniffed
 * type (docs/inputs.md).
 */

export type AssetKind = 'image' | 'video' | 'audio' | 'model';

export interface InspectedMedia {
  readonly kind: AssetKind;
  /** image/jpeg image/png image/webp image/heic video/mp4 video/quicktime video/webm model/gltf-binary audio/wav audio/mpeg */
  readonly mimeType: string;
  /** jpg png webp heic mp4 mov webm glb wav mp3: the stored file is `asset.<extension>`. */
  readonly extension: string;
  /** Images and videos, as displayed (EXIF orientation 5-8 and video rotation swap them); null for audio and GLB. */
  readonly width: number | null;
  readonly height: number | null;
  /** Video and audio; null otherwise. */
  readonly durationSeconds: number | null;
}

/**
 * Why a file is refused; `message` is safe to show a client (no paths, no ffmpeg output). The
 * `cause`, when there is one, is the underlying error, for the server log only.
 */
export class MediaRefusal extends Error {
  readonly reason: 'unsupported' | 'invalid' | 'too_large';
  constructor(reason: 'unsupported' | 'invalid' | 'too_large', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'MediaRefusal';
    this.reason = reason;
  }
}

export interface InspectDeps {
  readonly ffprobePath: string;
  readonly ffmpegPath: string;
  readonly limits: MediaLimits;
  readonly signal: AbortSignal;
}

interface TypeInfo {
  readonly kind: AssetKind;
  /** How refusals name it: `the file is a truncated or damaged <name>`. */
  readonly name: string;
  /** Images: the format sharp must read. */
  readonly image?: ImageFormat;
  /** Sound and video: the ffmpeg demuxer it is read with. */
  readonly demuxer?: string;
  /** The cheap structural check made before any decoder sees it. */
  readonly structure?: (file: FileHandle, size: number) => Promise<void>;
}

const TYPES: Readonly<Record<AssetType, TypeInfo>> = {
  jpg: { kind: 'image', name: 'JPEG image', image: 'jpeg' },
  png: { kind: 'image', name: 'PNG image', image: 'png' },
  webp: { kind: 'image', name: 'WebP image', image: 'webp' },
  heic: { kind: 'image', name: 'HEIC image', image: 'heif' },
  mp4: { kind: 'video', name: 'MP4 video', demuxer: 'mov', structure: checkIsoBmff },
  mov: { kind: 'video', name: 'MOV video', demuxer: 'mov', structure: checkIsoBmff },
  webm: { kind: 'video', name: 'WebM video', demuxer: 'matroska', structure: checkEbml },
  wav: { kind: 'audio', name: 'WAV audio file', demuxer: 'wav', structure: checkWav },
  mp3: { kind: 'audio', name: 'MP3 audio file', demuxer: 'mp3', structure: checkMp3 },
  glb: { kind: 'model', name: 'GLB model', structure: checkGlb },
};

/** Every message a client sees, in one place. */
export const REFUSALS = {
  accepted: 'upload JPEG, PNG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3',
  /** `what` as media-types.ts names it: `an HLS playlist`, `a GIF image`, `empty`. */
  unsupported(what: string): string {
    if (what === 'empty') return `the file is empty; ${this.accepted}`;
    if (what === 'not a file type it accepts') return `the file is not of a type this server accepts; ${this.accepted}`;
    return `the file is ${what}; ${this.accepted}`;
  },
  heic: "this server's image library cannot decode HEIC images; convert the image to JPEG or PNG and upload that",
  damaged: (name: string, why?: string) => `the file is a truncated or damaged ${name}${why ? `: ${why}` : ''}`,
  unusable: (name: string, why: string) => `the file is not a usable ${name}: ${why}`,
  /** `what` completes "the file …": `lasts 90 s; at most 60 s are accepted`. */
  tooLarge: (what: string) => `the file ${what}`,
  overBudget: 'the file took longer to decode than this server allows',
} as const;

/** How much of the file is read to tell its type. */
const SNIFF_BYTES = 64 * 1024;

/** libheif's words when it has no decoder for the image's coding (HEVC in sharp's prebuilt libvips). */
const NO_DECODER = /not been built in|no decoding plugin|decoder plugin|unsupported codec/i;

/** Inspects a file the server wrote at `path` (size known). Resolves with what it is, or rejects with MediaRefusal; any other rejection is a server fault. */
export async function inspectMedia(path: string, deps: InspectDeps): Promise<InspectedMedia> {
  deps.signal.throwIfAborted();
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const sniffed = sniffAsset(await readAt(file, 0, SNIFF_BYTES));
    if (!sniffed.ok) throw new MediaRefusal('unsupported', REFUSALS.unsupported(sniffed.what));
    const type = TYPES[sniffed.type];
    // The media type is the one the file is served with: one table, the output store's.
    const found = { kind: type.kind, mimeType: contentTypeOf(`asset.${sniffed.type}`), extension: sniffed.type };
    if (type.image) return { ...found, ...(await inspectImage(path, type, type.image, deps)) };
    // A model's framing is all there is to check: a fault there makes it unusable, not just cut short.
    const framing = type.kind === 'model' ? (why: string) => REFUSALS.unusable(type.name, why) : (why: string) => REFUSALS.damaged(type.name, why);
    await refuseClaims(() => type.structure!(file, size), framing);
    if (type.kind === 'model') return { ...found, width: null, height: null, durationSeconds: null };
    return { ...found, ...(await inspectTimed(path, type, type.demuxer!, deps)) };
  } finally {
    await file.close();
  }
}

type Measures = Pick<InspectedMedia, 'width' | 'height' | 'durationSeconds'>;

/**
 * Runs `check`, turning a ClaimError into the refusal that names the file: `too_large` as it
 * says, `invalid` worded by `invalid` (damaged framing, or an unusable file).
 */
async function refuseClaims<T>(check: () => Promise<T> | T, invalid: (why: string) => string): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof ClaimError)) throw err;
    if (err.reason === 'too_large') throw new MediaRefusal('too_large', REFUSALS.tooLarge(err.what), err);
    throw new MediaRefusal('invalid', invalid(err.what), err);
  }
}

async function inspectImage(path: string, type: TypeInfo, format: ImageFormat, deps: InspectDeps): Promise<Measures> {
  const header = await refuseClaims(() => readImageHeader(path, format, deps.limits), (why) => REFUSALS.damaged(type.name, why));
  // An AV1-coded HEIF is AVIF, whatever its brand says.
  if (format === 'heif' && header.compression === 'av1') throw new MediaRefusal('unsupported', REFUSALS.unsupported('an AVIF image'));
  deps.signal.throwIfAborted();
  try {
    // A full decode, failing on any decoder error (a truncated file included); libvips keeps to
    // the pixel limit itself too. Statistics need every pixel and keep none.
    await sharp(path, { limitInputPixels: deps.limits.imagePixels, failOn: 'error', sequentialRead: true }).stats();
  } catch (err) {
    if (format === 'heif' && NO_DECODER.test((err as Error).message)) throw new MediaRefusal('unsupported', REFUSALS.heic, err);
    throw new MediaRefusal('invalid', REFUSALS.damaged(type.name), err);
  }
  deps.signal.throwIfAborted();
  // EXIF orientations 5 to 8 turn the picture a quarter: shown, it is as wide as it is stored high.
  const turned = header.orientation >= 5;
  return { width: turned ? header.height : header.width, height: turned ? header.width : header.height, durationSeconds: null };
}

/** A failed ffprobe or ffmpeg run as a refusal; a failure to run at all is the server's. */
function toolFailure(err: unknown, type: TypeInfo): unknown {
  if (err instanceof DecodeBudgetError) return new MediaRefusal('too_large', REFUSALS.overBudget, err);
  if (err instanceof FfmpegError) return new MediaRefusal('invalid', REFUSALS.damaged(type.name), err);
  return err;
}

async function inspectTimed(path: string, type: TypeInfo, demuxer: string, deps: InspectDeps): Promise<Measures> {
  const { signal, limits } = deps;
  const report = await probeFile(deps.ffprobePath, path, demuxer, signal).catch((err: unknown) => {
    throw toolFailure(err, type);
  });
  const measures: Measures = await refuseClaims(() => {
    if (type.kind === 'audio') return { width: null, height: null, durationSeconds: checkAudioClaims(report, limits) };
    const video = checkVideoClaims(report, limits);
    return { width: video.width, height: video.height, durationSeconds: video.seconds };
  }, (why) => REFUSALS.unusable(type.name, why));
  const decoded = await decodeWhole(path, type, demuxer, deps);
  const claimed = measures.durationSeconds!;
  // Headers can disagree with the data: an MP3 cut short keeps the length its Xing header
  // claims; one without that header has a length estimated from its first frame's bit rate.
  if (decoded === undefined || Math.abs(decoded - claimed) <= Math.max(1, claimed / 10)) return measures;
  if (decoded < claimed) {
    throw new MediaRefusal('invalid', REFUSALS.damaged(type.name, `it holds ${seconds(decoded)} of the ${seconds(claimed)} it claims`));
  }
  if (decoded > limits.videoSeconds) {
    throw new MediaRefusal('too_large', REFUSALS.tooLarge(`lasts ${seconds(decoded)}; at most ${seconds(limits.videoSeconds)} are accepted`));
  }
  return { ...measures, durationSeconds: decoded };
}

/** ffmpeg's progress line (`-stats`), which it writes whatever the log level. */
const STATS_LINE = /^\s*(frame|size)=/;
const STATS_TIME = /time=(-?)(\d+):(\d\d):(\d\d(?:\.\d+)?)/g;

/**
 * Decodes every frame and sample (`0:V` leaves out cover art) under the decode budget. Any error
 * ffmpeg reports refuses the file: `-xerror` stops at errors a decoder returns, but decoders that
 * conceal damage (H.264's) only log it, and at `-loglevel error` anything logged is an error.
 * Resolves with the length decoded, in seconds, when ffmpeg reports it.
 */
async function decodeWhole(path: string, type: TypeInfo, demuxer: string, deps: InspectDeps): Promise<number | undefined> {
  const streams = type.kind === 'audio' ? ['-map', '0:a'] : ['-map', '0:V', '-map', '0:a?'];
  const stderr = await runFfmpeg(['-xerror', '-stats', ...demuxedInputArgs(path, demuxer), ...streams, '-f', 'null', '-'], {
    signal: deps.signal,
    ffmpegPath: deps.ffmpegPath,
    budget: decodeBudget(deps.limits),
  }).catch((err: unknown) => {
    throw toolFailure(err, type);
  });
  const errors = stderr.split(/[\r\n]+/).filter((line) => line.trim() !== '' && !STATS_LINE.test(line));
  if (errors.length > 0) {
    throw new MediaRefusal('invalid', REFUSALS.damaged(type.name), new Error(`ffmpeg reported: ${errors.slice(-3).join(' | ')}`));
  }
  const last = [...stderr.matchAll(STATS_TIME)].pop();
  if (!last) return undefined;
  const value = Number(last[2]) * 3600 + Number(last[3]) * 60 + Number(last[4]);
  return last[1] ? -value : value;
}
