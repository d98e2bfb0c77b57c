import { join } from 'node:path';
import sharp from 'sharp';
import type { OutputFile } from '../engine.js';
import { runFfmpeg } from '../media/ffmpeg.js';
import type { RawImage } from './image/pixels.js';
import type { RenderEnv } from './render-types.js';

/** The preview is a thumbnail: enough to show progress, small enough to store for every job. */
const PREVIEW_EDGE = 512;

export const PREVIEW_FILE: OutputFile = Object.freeze({ name: 'preview.jpg', contentType: 'image/jpeg' });

export async function writeImagePreview(image: RawImage, outDir: string): Promise<OutputFile> {
  await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(PREVIEW_EDGE, PREVIEW_EDGE, { fit: 'inside' })
    .jpeg({ quality: 80 })
    .toFile(join(outDir, PREVIEW_FILE.name));
  return PREVIEW_FILE;
}

/** The video's middle frame, taken from the finished file so the preview shows what was made. */
export async function writeVideoPreview(video: string, frames: number, env: RenderEnv): Promise<OutputFile> {
  const poster = join(env.workDir, 'poster.png');
  const middle = Math.floor(frames / 2);
  await runFfmpeg(['-i', video, '-vf', `select=eq(n\\,${middle})`, '-frames:v', '1', poster], {
    signal: env.ctx.signal,
    ffmpegPath: await env.ffmpeg(),
  });
  await sharp(poster)
    .resize(PREVIEW_EDGE, PREVIEW_EDGE, { fit: 'inside' })
    .jpeg({ quality: 80 })
    .toFile(join(env.ctx.outDir, PREVIEW_FILE.name));
  return PREVIEW_FILE;
}
