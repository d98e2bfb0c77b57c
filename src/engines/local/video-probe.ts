import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../engine.js';
import { FfmpegError, runFfmpeg } from '../ffmpeg.js';
import type { RenderEnv } from './render-types.js';

/** What the local engine needs to know of an input video. */
export interface VideoInput {
  readonly path: string;
  readonly seconds: number;
  readonly hasAudio: boolean;
}

/**
 * Fetches a video input and checks it by decoding its first frame: the bundled ffmpeg comes
 * without ffprobe, so the container duration and the stream list are read from what ffmpeg
 * reports while doing so.
 */
export async function loadVideoInput(url: string, field: string, env: RenderEnv): Promise<VideoInput> {
  const bytes = await env.ctx.loadInput(url, field);
  const path = join(env.workDir, 'input-video');
  await writeFile(path, bytes);
  const invalid = (why: string) => new EngineError('input_invalid', `${field} is not a usable video: ${why}`);
  let report: string;
  try {
    report = await runFfmpeg(['-i', path, '-map', '0:v:0', '-frames:v', '1', '-f', 'null', '-'], {
      signal: env.ctx.signal,
      ffmpegPath: await env.ffmpeg(),
      loglevel: 'info',
    });
  } catch (err) {
    if (!(err instanceof FfmpegError)) throw err;
    // ffmpeg names the file it read; the client knows it by its field.
    const tail = err.stderrTail.split(path).join(field);
    throw invalid(/matches no streams/.test(tail) ? 'it has no video stream' : tail || 'ffmpeg cannot read it');
  }
  const outputStart = report.search(/^Output #0/m);
  const input = outputStart < 0 ? report : report.slice(0, outputStart);
  const duration = /Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(input);
  if (!duration) throw invalid('it has no duration (a still image?)');
  const seconds = Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]);
  if (!(seconds > 0)) throw invalid('its duration is zero');
  // A single picture decodes as a one-frame "video"; an image format is not a video input.
  if (/Video: (png|mjpeg|bmp|gif|webp|tiff)\b/.test(input) && seconds < 0.1) throw invalid('it is a still image');
  return { path, seconds, hasAudio: /Stream #\d+:\d+.*: Audio:/.test(input) };
}
