import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { LAVFI_TONE, LAVFI_VIDEO, ffmpegFile, triangleGlb } from '../engines/asset-fixtures.js';
import { checkedInject } from './checked-inject.js';

/** Real files of every kind an asset may be, made by sharp and ffmpeg, with what an upload must report. */
export interface AssetFile {
  readonly name: string;
  readonly bytes: Buffer;
  readonly mime: string;
  readonly kind: 'image' | 'video' | 'audio' | 'model';
  readonly width: number | null;
  readonly height: number | null;
  /** Roughly: what ffprobe says of a file made to last this long. */
  readonly seconds: number | null;
}

const ffmpeg = async (dir: string, name: string, args: readonly string[]) => readFile(await ffmpegFile(dir, name, ['-y', ...args]));
const COLOR = LAVFI_VIDEO(1);
const TONE = LAVFI_TONE(1);

export async function assetFiles(dir: string): Promise<AssetFile[]> {
  const image = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#3060c0' } });
  const [png, jpeg, webp, mp4, mov, webm, wav, mp3] = await Promise.all([
    image(40, 30).png().toBuffer(),
    image(50, 20).jpeg().toBuffer(),
    image(30, 60).webp().toBuffer(),
    ffmpeg(dir, 'a.mp4', [...COLOR, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']),
    ffmpeg(dir, 'a.mov', [...COLOR, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']),
    ffmpeg(dir, 'a.webm', [...COLOR, '-c:v', 'libvpx', '-deadline', 'realtime', '-b:v', '200k']),
    ffmpeg(dir, 'a.wav', [...TONE, '-c:a', 'pcm_s16le']),
    ffmpeg(dir, 'a.mp3', [...TONE, '-c:a', 'libmp3lame', '-b:a', '64k']),
  ]);
  return [
    { name: 'a.png', bytes: png, mime: 'image/png', kind: 'image', width: 40, height: 30, seconds: null },
    { name: 'a.jpg', bytes: jpeg, mime: 'image/jpeg', kind: 'image', width: 50, height: 20, seconds: null },
    { name: 'a.webp', bytes: webp, mime: 'image/webp', kind: 'image', width: 30, height: 60, seconds: null },
    { name: 'a.mp4', bytes: mp4, mime: 'video/mp4', kind: 'video', width: 64, height: 48, seconds: 1 },
    { name: 'a.mov', bytes: mov, mime: 'video/quicktime', kind: 'video', width: 64, height: 48, seconds: 1 },
    { name: 'a.webm', bytes: webm, mime: 'video/webm', kind: 'video', width: 64, height: 48, seconds: 1 },
    { name: 'a.glb', bytes: triangleGlb(), mime: 'model/gltf-binary', kind: 'model', width: null, height: null, seconds: null },
    { name: 'a.wav', bytes: wav, mime: 'audio/wav', kind: 'audio', width: null, height: null, seconds: 1 },
    { name: 'a.mp3', bytes: mp3, mime: 'audio/mpeg', kind: 'audio', width: null, height: null, seconds: 1 },
  ];
}

/** A multipart/form-data body as a browser or curl would send it. */
export async function form(parts: Record<string, { bytes: Buffer; filename: string; type?: string } | string>): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const fd = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (typeof value === 'string') fd.append(name, value);
    else fd.append(name, new Blob([value.bytes], { type: value.type ?? 'application/octet-stream' }), value.filename);
  }
  const req = new Request('http://form.invalid/', { method: 'POST', body: fd });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

/** POST /assets with `file` (and any other form fields), as the token's workspace. */
export async function uploadAsset(
  app: FastifyInstance,
  token: string,
  file: { bytes: Buffer; filename: string; type?: string },
  extra: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const { payload, headers } = await form({ file, ...extra });
  return checkedInject(app, { method: 'POST', url: '/assets', payload, headers: { ...headers, authorization: `Bearer ${token}` } });
}
