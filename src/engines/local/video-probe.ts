import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../engine.js';
import { FfmpegError, runFfmpeg } from '../ffmpeg.js';
import { probeFile } from '../ffprobe.js';
import type { ProbeReport } from '../ffprobe.js';
import { budgetFailure, count, decodeBudget, seconds, tooLarge } from '../media-limits.js';
import type { MediaLimits } from '../media-limits.js';
import { VIDEO_DEMUXERS, demuxedInputArgs, notAVideo, sniffVideo } from '../media-types.js';
import type { RenderEnv } from './render-types.js';

/** What the local engine needs to know of an input video. */
export interface VideoInput {
  readonly field: string;
  /** A file the server wrote, in the run's work directory. */
  readonly path: string;
  /** The ffmpeg demuxer its verified container type is read with. */
  readonly demuxer: string;
  readonly seconds: number;
  readonly hasAudio: boolean;
}

/** The input options of every ffmpeg run on an input video (media-types.ts `demuxedInputArgs`). */
export function videoInputArgs(video: Pick<VideoInput, 'path' | 'demuxer'>): string[] {
  return demuxedInputArgs(video.path, video.demuxer);
}

/** Codecs of single pictures: one frame of these in a container is a still image, not a video. */
const STILL_CODECS = new Set(['png', 'mjpeg', 'bmp', 'gif', 'webp', 'tiff']);

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
  const { seconds: length, hasAudio } = checkVideoClaims(field, report, env.limits);

  try {
    await runFfmpeg([...videoInputArgs({ path, demuxer }), '-map', '0:v:0', '-frames:v', '1', '-f', 'null', '-'], {
      signal,
      ffmpegPath: await env.ffmpeg(),
      budget: decodeBudget(env.limits),
    });
  } catch (err) {
    throw unreadable(err);
  }
  return { field, path, demuxer, seconds: length, hasAudio };
}

/**
 * Checks what the probe says the video claims against the limits, before any frame is decoded.
 * Returns the container's duration (the length the render keeps) and whether it has sound.
 */
export function checkVideoClaims(field: string, report: ProbeReport, limits: MediaLimits): { seconds: number; hasAudio: boolean } {
  const invalid = (why: string) => new EngineError('input_invalid', `${field} is not a usable video: ${why}`);
  const { streams } = report;
  if (streams.length > limits.streams) {
    throw tooLarge(field, `has ${streams.length} streams; at most ${limits.streams} are accepted`);
  }
  const videos = streams.filter((s) => s.type === 'video');
  if (videos.length === 0) throw invalid('it has no video stream');

  const durations = [report.duration, ...streams.map((s) => s.duration)].filter((d) => !Number.isNaN(d));
  const longest = Math.max(...durations);
  if (durations.length > 0 && longest > limits.videoSeconds) {
    throw tooLarge(field, `lasts ${seconds(longest)}; at most ${seconds(limits.videoSeconds)} are accepted`);
  }
  for (const v of videos) {
    if (!(v.width > 0 && v.height > 0)) throw invalid('its video stream has no frame size');
    if (v.width * v.height > limits.videoPixels) {
      throw tooLarge(field, `has frames of ${v.width} x ${v.height} pixels; at most ${count(limits.videoPixels)} pixels per frame are accepted`);
    }
    const frames = Number.isNaN(v.frames) ? (Number.isNaN(v.duration) ? report.duration : v.duration) * v.fps : v.frames;
    if (frames > limits.videoFrames) {
      throw tooLarge(field, `has ${count(frames)} frames; at most ${count(limits.videoFrames)} are accepted`);
    }
  }

  const length = Number.isNaN(report.duration) ? Math.max(0, ...durations) : report.duration;
  if (durations.length === 0) throw invalid('it has no duration (a still image?)');
  if (!(length > 0)) throw invalid('its duration is zero');
  // A single picture in a video container decodes as a one-frame "video".
  if (STILL_CODECS.has(videos[0]!.codec) && length < 0.1) throw invalid('it is a still image');
  return { seconds: length, hasAudio: streams.some((s) => s.type === 'audio') };
}
