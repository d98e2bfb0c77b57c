import sharp from 'sharp';
import { EngineError } from '../engine.js';
import type { ProbeReport } from './ffprobe.js';
import { count, seconds, tooLarge } from './media-limits.js';
import type { MediaLimits } from './media-limits.js';
import type { ImageFormat } from './media-types.js';

/**
 * What a media file claims in its headers, checked against the limits before anything decodes
 * it. Shared by the local engine's inputs (job errors naming a field) and asset inspection
 * (refusals naming "the file"): each check says what is wrong, its caller says of what.
 */

/**
 * A claim over a limit (`too_large`) or one that makes the file unusable (`invalid`). `what`
 * completes a sentence about the file: `lasts 90 s; at most 60 s are accepted` for `too_large`,
 * the reason after `is not a usable video:` (`it has no video stream`) for `invalid`. `cause`, if
 * any, is for the server log only.
 */
export class ClaimError extends Error {
  readonly reason: 'invalid' | 'too_large';
  readonly what: string;
  constructor(reason: 'invalid' | 'too_large', what: string, cause?: unknown) {
    super(what, cause === undefined ? undefined : { cause });
    this.name = 'ClaimError';
    this.reason = reason;
    this.what = what;
  }
}

/** A ClaimError as the job's error naming the input `field`; anything else unchanged. */
export function claimFailure(field: string, noun: 'video' | 'image', err: unknown): unknown {
  if (!(err instanceof ClaimError)) return err;
  if (err.reason === 'too_large') return tooLarge(field, err.what);
  const detail = err.cause instanceof Error ? { detail: err.cause.message } : {};
  return new EngineError('input_invalid', `${field} is not a usable ${noun}: ${err.what}`, detail);
}

const tooLong = (length: number, limits: MediaLimits) =>
  new ClaimError('too_large', `lasts ${seconds(length)}; at most ${seconds(limits.videoSeconds)} are accepted`);

/** The longest duration the container or any stream claims (NaN when none says), checked. */
function checkDuration(report: ProbeReport, limits: MediaLimits): { longest: number; length: number } {
  if (report.streams.length > limits.streams) {
    throw new ClaimError('too_large', `has ${report.streams.length} streams; at most ${limits.streams} are accepted`);
  }
  const durations = [report.duration, ...report.streams.map((s) => s.duration)].filter((d) => !Number.isNaN(d));
  const longest = durations.length > 0 ? Math.max(...durations) : NaN;
  if (longest > limits.videoSeconds) throw tooLong(longest, limits);
  return { longest, length: Number.isNaN(report.duration) ? Math.max(0, ...durations) : report.duration };
}

/** Codecs of single pictures: one frame of these in a container is a still image, not a video. */
const STILL_CODECS = new Set(['png', 'mjpeg', 'bmp', 'gif', 'webp', 'tiff']);

export interface VideoClaims {
  /** The container's duration (else the longest stream's): the length a render keeps. */
  readonly seconds: number;
  readonly hasAudio: boolean;
  /** The first video stream's frame size as shown (turned by its rotation). */
  readonly width: number;
  readonly height: number;
  /** The first video stream's frame rate (average, else base), or NaN when it does not say. */
  readonly fps: number;
}

/** Checks what ffprobe says a video claims against the limits, before any frame is decoded. */
export function checkVideoClaims(report: ProbeReport, limits: MediaLimits): VideoClaims {
  const { longest, length } = checkDuration(report, limits);
  const videos = report.streams.filter((s) => s.type === 'video' && !s.attachedPic);
  if (videos.length === 0) throw new ClaimError('invalid', 'it has no video stream');
  for (const v of videos) {
    if (!(v.width > 0 && v.height > 0)) throw new ClaimError('invalid', 'its video stream has no frame size');
    if (v.width * v.height > limits.videoPixels) {
      throw new ClaimError('too_large', `has frames of ${v.width} x ${v.height} pixels; at most ${count(limits.videoPixels)} pixels per frame are accepted`);
    }
    const frames = Number.isNaN(v.frames) ? (Number.isNaN(v.duration) ? report.duration : v.duration) * v.fps : v.frames;
    if (frames > limits.videoFrames) {
      throw new ClaimError('too_large', `has ${count(frames)} frames; at most ${count(limits.videoFrames)} are accepted`);
    }
  }
  if (Number.isNaN(longest)) throw new ClaimError('invalid', 'it has no duration (a still image?)');
  if (!(length > 0)) throw new ClaimError('invalid', 'its duration is zero');
  const first = videos[0]!;
  // A single picture in a video container decodes as a one-frame "video".
  if (STILL_CODECS.has(first.codec) && length < 0.1) throw new ClaimError('invalid', 'it is a still image');
  const turned = Math.abs(first.rotation) % 180 === 90;
  return {
    seconds: length,
    hasAudio: report.streams.some((s) => s.type === 'audio'),
    width: turned ? first.height : first.width,
    height: turned ? first.width : first.height,
    fps: first.fps,
  };
}

/**
 * Checks what ffprobe says a sound file claims: at least one audio stream, no video but cover
 * art (an attached picture, at most `imagePixels`, never decoded here), the duration under the
 * video limit. Returns its duration.
 */
export function checkAudioClaims(report: ProbeReport, limits: MediaLimits): number {
  const { longest, length } = checkDuration(report, limits);
  if (!report.streams.some((s) => s.type === 'audio')) throw new ClaimError('invalid', 'it has no audio stream');
  for (const s of report.streams.filter((v) => v.type === 'video')) {
    if (!s.attachedPic) throw new ClaimError('invalid', 'it has a video stream (upload videos as MP4, MOV or WebM)');
    if (s.width * s.height > limits.imagePixels) {
      throw new ClaimError('too_large', `has cover art of ${s.width} x ${s.height} pixels; at most ${count(limits.imagePixels)} pixels are accepted`);
    }
  }
  if (Number.isNaN(longest)) throw new ClaimError('invalid', 'it has no duration');
  if (!(length > 0)) throw new ClaimError('invalid', 'its duration is zero');
  return length;
}

export interface ImageHeader {
  /** Of the first page or frame, as stored (EXIF orientation not applied). */
  readonly width: number;
  readonly height: number;
  /** EXIF orientation, 1 (none) to 8. */
  readonly orientation: number;
  /** HEIF only: `hevc` (HEIC) or `av1` (AVIF). */
  readonly compression: string | undefined;
}

/**
 * Reads an image's header with sharp (a Buffer, or a file the server wrote: sharp reads only
 * that) and checks its pixel count against `limits.imagePixels`, before anything decodes it.
 * The header must be of the sniffed format.
 */
export async function readImageHeader(input: Buffer | string, sniffed: ImageFormat, limits: MediaLimits): Promise<ImageHeader> {
  let header: ImageHeader;
  try {
    // The header only: the claimed size is judged here, with the limit's own message.
    const meta = await sharp(input, { limitInputPixels: false }).metadata();
    // sharp names AVIF `heif` (an AV1-coded HEIF).
    const format = meta.format === 'heif' && sniffed === 'avif' ? 'avif' : meta.format;
    if (format !== sniffed) throw new Error(`sniffed ${sniffed}, sharp read ${meta.format ?? 'nothing'}`);
    const height = meta.pageHeight ?? meta.height;
    header = { width: meta.width, height, orientation: meta.orientation ?? 1, compression: meta.compression };
  } catch (err) {
    throw new ClaimError('invalid', `its ${sniffed.toUpperCase()} header cannot be read`, err);
  }
  if (!(header.width > 0 && header.height > 0)) throw new ClaimError('invalid', 'it has no pixels');
  if (header.width * header.height > limits.imagePixels) {
    throw new ClaimError('too_large', `is ${header.width} x ${header.height} pixels; at most ${count(limits.imagePixels)} pixels are accepted`);
  }
  return header;
}
