// Room services/openai/: GET /v1/videos/{id}/content: a completed video job's file, or its first
// frame as a WebP thumbnail (what OpenAI's `variant=thumbnail` answers), made from our own output.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { contentTypeOf, isOutputName } from '../../outputs/output-store.js';
import type { OutputStore } from '../../outputs/output-store.js';

/** A thumbnail is a preview: enough to recognise the video, small enough to make on each request. */
const THUMBNAIL_EDGE = 640;
/** Decoding one frame of our own file takes well under a second; this only bounds a broken one. */
const FRAME_BUDGET = { wallMs: 30_000, cpuSeconds: 20 };

/** What GET /v1/videos/{id}/content answers: bytes to stream, their type and length. */
export interface VideoContent {
  readonly contentType: string;
  readonly size: number;
  readonly body: Readable | Buffer;
}

/** The video file among a completed job's outputs: the first whose name says video (the preview is an image). */
export function videoFileOf(result: Readonly<Record<string, unknown>> | null): string | undefined {
  const urls = result?.urls;
  const list = Array.isArray(urls) ? urls.map((u) => (typeof u === 'string' ? u : (u as { url?: unknown }).url)) : urls && typeof urls === 'object' ? Object.values(urls) : [];
  for (const url of list) {
    if (typeof url !== 'string') continue;
    const name = url.slice(url.lastIndexOf('/') + 1).split('?')[0]!;
    if (isOutputName(name) && contentTypeOf(name).startsWith('video/')) return name;
  }
  return undefined;
}

/** The stored file as it is, streamed. Undefined when it is not there (removed meanwhile). */
export async function openVideo(outputs: Pick<OutputStore, 'open'>, key: string, name: string): Promise<VideoContent | undefined> {
  const file = await outputs.open(key, name);
  if (!file) return undefined;
  return { contentType: contentTypeOf(name), size: file.size, body: file.stream() };
}

/**
 * The video's first frame as WebP, at most THUMBNAIL_EDGE px on its long side. The stored file is
 * copied to a private temporary directory first: the output store may be S3, and ffmpeg seeks.
 * ffmpeg only ever reads a file this server wrote (a job's output), never a caller's bytes.
 */
export async function firstFrame(outputs: Pick<OutputStore, 'open'>, key: string, name: string, signal: AbortSignal): Promise<VideoContent | undefined> {
  const file = await outputs.open(key, name);
  if (!file) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'mediagen-thumbnail-'));
  try {
    const video = join(dir, name);
    await pipeline(file.stream(), createWriteStream(video), { signal });
    const [{ runFfmpeg, locateFfmpeg }, { default: sharp }] = await Promise.all([import('../../engines/media/ffmpeg.js'), import('sharp')]);
    const frame = join(dir, 'frame.png');
    await runFfmpeg(['-i', video, '-map', '0:v:0', '-frames:v', '1', '-an', frame], { signal, ffmpegPath: await locateFfmpeg(), budget: FRAME_BUDGET });
    const webp = await sharp(await readFile(frame)).resize(THUMBNAIL_EDGE, THUMBNAIL_EDGE, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
    return { contentType: 'image/webp', size: webp.length, body: webp };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
