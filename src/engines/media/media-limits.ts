import { DEFAULTS } from '../../config/options.js';
import { EngineError } from '../engine.js';
import { DecodeBudgetError } from './ffmpeg.js';
import type { DecodeBudget } from './ffmpeg.js';

/**
 * What an input may claim before anything decodes it, and what decoding it may cost. A few KB can
 * claim ten hours of video or a 10-gigapixel image; the claims are read from headers (ffprobe's
 * report, the image header) and checked here first, so such an input fails at once as
 * `input_too_large` instead of burning CPU until the job times out. Set from the `input_max_*`
 * and `input_decode_*` options (docs/config.md).
 */
export interface MediaLimits {
  /** Longest video input, seconds (container and every stream). */
  readonly videoSeconds: number;
  /** Most frames in any video stream (its frame count, else duration × frame rate). */
  readonly videoFrames: number;
  /** Largest frame, width × height, of any video stream. */
  readonly videoPixels: number;
  /** Most streams (video, audio, subtitles, data) in one video input. */
  readonly streams: number;
  /** Largest image input, width × height (of its first page or frame). */
  readonly imagePixels: number;
  /** Wall time of one ffmpeg run that reads an input. */
  readonly decodeWallMs: number;
  /** CPU time of one ffmpeg run that reads an input. */
  readonly decodeCpuSeconds: number;
}

/** The defaults of docs/config.md, for callers (tests) that do not read a config. */
export const DEFAULT_MEDIA_LIMITS: MediaLimits = Object.freeze({
  videoSeconds: DEFAULTS.input_max_video_seconds,
  videoFrames: DEFAULTS.input_max_video_frames,
  videoPixels: DEFAULTS.input_max_video_pixels,
  streams: DEFAULTS.input_max_streams,
  imagePixels: DEFAULTS.input_max_image_pixels,
  decodeWallMs: DEFAULTS.input_decode_timeout_ms,
  decodeCpuSeconds: DEFAULTS.input_decode_cpu_seconds,
});

export function decodeBudget(limits: MediaLimits): DecodeBudget {
  return { wallMs: limits.decodeWallMs, cpuSeconds: limits.decodeCpuSeconds };
}

export function tooLarge(field: string, what: string, detail?: string): EngineError {
  return new EngineError('input_too_large', `${field} ${what}`, detail === undefined ? {} : { detail });
}

/** A run that reads `field` and passed its budget, as the job's error; anything else unchanged. */
export function budgetFailure(field: string, err: unknown): unknown {
  if (!(err instanceof DecodeBudgetError)) return err;
  const spent = err.kind === 'wall' ? 'wall-time' : 'CPU-time';
  return tooLarge(field, `took longer to decode than its ${spent} budget allows`, err.message);
}

/** `36000.5` as `36000.5 s`; whole numbers without decimals. */
export function seconds(n: number): string {
  return `${Number(n.toFixed(2))} s`;
}

export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
