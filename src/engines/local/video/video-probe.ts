import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../engine.js';
import { FfmpegError, runFfmpeg } from '../../media/ffmpeg.js';
import { probeFile } from '../../media/ffprobe.js';
import type { ProbeReport } from '../../media/ffprobe.js';
import { checkVideoClaims as checkClaims, claimFailure } from '../../media/media-claims.js';
import type { VideoClaims } from '../../media/media-claims.js';
import { budgetFailure, decodeBudget } from '../../media/media-limits.js';
import type { MediaLimits } from '../../media/media-limits.js';
import { VIDEO_DEMUXERS, demuxedInputArgs, notAVideo, sniffVideo } from '../../media/media-types.js';
import type { RenderEnv } from '../render-types.js';
import { AUDIO_RATE, aacArgs, audioTrim, mp4Args } from './video-encode.js';

/** What the local engine needs to know of an input video. */
export interface VideoInput {
  readonly field: string;
  /** A file the server wrote, in the run's work directory. */
  readonly path: string;
  /** The ffmpeg demuxer its verified container type is read with. */
  readonly demuxer: string;
  readonly seconds: number;
  readonly hasAudio: boolean;
  /** The frame size as shown (rotation applied), and the frame rate (NaN when unstated). */
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

/** The input options of every ffmpeg run on an input video (media-types.ts `demuxedInputArgs`). */
export function videoInputArgs(video: Pick<VideoInput, 'path' | 'demuxer'>): string[] {
  return demuxedInputArgs(video.path, video.demuxer);
}

/**
 * Loads a video input and checks it before rendering: its container type from its bytes (MP4, MOV,
 * WebM or Matroska only), then what ffprobe reports against `limits`, then one decoded frame
 * within the decode budget. Each failure is the job's error, naming the field.
 */
export async function loadVideoInput(url: string, field: string, env: RenderEnv): Promise<VideoInput> {
  const bytes = await env.ctx.loadInput(url, field);
  const sniffed = sniffVideo(bytes);
  if (!sniffed.ok) throw new EngineError('input_invalid', notAVideo(field, sniffed.what));
  const demuxer = VIDEO_DEMUXERS[sniffed.type];
  const path = join(env.workDir, `input-video.${sniffed.type}`);
  await writeFile(path, bytes);
  const { signal } = env.ctx;
  const unreadable = (err: unknown) => {
    if (!(err instanceof FfmpegError)) return budgetFailure(field, err);
    return new EngineError('input_invalid', `${field} is not a usable video: it cannot be read as ${sniffed.type.toUpperCase()}`, {
      detail: err.message,
    });
  };

  let report: ProbeReport;
  try {
    report = await probeFile(await env.ffprobe(), path, demuxer, signal);
  } catch (err) {
    throw unreadable(err);
  }
  const { seconds: length, hasAudio, width, height, fps } = claimsOf(field, report, env.limits);

  try {
    await runFfmpeg([...videoInputArgs({ path, demuxer }), '-map', '0:v:0', '-frames:v', '1', '-f', 'null', '-'], {
      signal,
      ffmpegPath: await env.ffmpeg(),
      budget: decodeBudget(env.limits),
    });
  } catch (err) {
    throw unreadable(err);
  }
  return { field, path, demuxer, seconds: length, hasAudio, width, height, fps };
}

/**
 * Checks what the probe says the video claims against the limits (media-claims.ts), before any
 * frame is decoded, as the job's error naming `field`. Returns the container's duration (the
 * length the render keeps) and whether it has sound.
 */
export function checkVideoClaims(field: string, report: ProbeReport, limits: MediaLimits): { seconds: number; hasAudio: boolean } {
  const { seconds, hasAudio } = claimsOf(field, report, limits);
  return { seconds, hasAudio };
}

/** Everything checkClaims reads, its failure as the job's error naming `field`. */
function claimsOf(field: string, report: ProbeReport, limits: MediaLimits): VideoClaims {
  try {
    return checkClaims(report, limits);
  } catch (err) {
    throw claimFailure(field, 'video', err);
  }
}

/**
 * Re-encodes an input video to `out`: `[0:v]` through `videoChain` (filters ending in the output
 * frames), the sound, if any, resampled and trimmed to `seconds`, then `encode` (the H.264
 * options) and the MP4 container. It decodes the whole input, so it runs under the input's
 * decode budget, and a run past it is the input's `input_too_large`.
 */
export async function reencodeVideo(
  video: VideoInput,
  env: RenderEnv,
  render: { readonly videoChain: string; readonly seconds: number; readonly encode: readonly string[]; readonly out: string },
): Promise<void> {
  const graph = [`[0:v]${render.videoChain}[v]`];
  if (video.hasAudio) graph.push(`[0:a:0]aresample=${AUDIO_RATE},${audioTrim(render.seconds)}[a]`);
  await runFfmpeg(
    [
      ...videoInputArgs(video),
      '-filter_complex', graph.join(';'),
      '-map', '[v]',
      ...(video.hasAudio ? ['-map', '[a]', ...aacArgs()] : []),
      ...render.encode,
      ...mp4Args(),
      render.out,
    ],
    { signal: env.ctx.signal, ffmpegPath: await env.ffmpeg(), budget: decodeBudget(env.limits) },
  ).catch((err: unknown) => {
    throw budgetFailure(video.field, err);
  });
}
