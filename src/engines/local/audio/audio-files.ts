import { writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { OutputFile } from '../../engine.js';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { AUDIO_SAMPLE_RATE } from './audio-synth.js';
import type { Stereo } from './audio-synth.js';
import type { RenderEnv } from '../render-types.js';
import { hslToRgb } from '../image/scene-svg.js';
import type { Rgb } from '../image/scene-svg.js';

/** The files of an audio model: 16-bit PCM WAV, MP3 made from it by ffmpeg, a waveform picture. */

export const OUTPUT_WAV: OutputFile = Object.freeze({ name: 'output.wav', contentType: 'audio/wav' });
export const OUTPUT_MP3: OutputFile = Object.freeze({ name: 'output.mp3', contentType: 'audio/mpeg' });
export const WAVEFORM_PREVIEW: OutputFile = Object.freeze({ name: 'preview.png', contentType: 'image/png' });

/** 192 kbit/s constant bit rate: transparent for this material, and the same size for the same length. */
export const MP3_BITRATE = '192k';

const WAV_HEADER_BYTES = 44;

/** Interleaved little-endian 16-bit PCM after a canonical 44-byte RIFF header. */
export function wavBytes(audio: Stereo): Buffer {
  const frames = audio.left.length;
  const dataBytes = frames * 4;
  const buf = Buffer.alloc(WAV_HEADER_BYTES);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(2, 22); // channels
  buf.writeUInt32LE(AUDIO_SAMPLE_RATE, 24);
  buf.writeUInt32LE(AUDIO_SAMPLE_RATE * 4, 28); // bytes a second
  buf.writeUInt16LE(4, 32); // bytes a frame
  buf.writeUInt16LE(16, 34); // bits a sample
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  const pcm = new Int16Array(frames * 2);
  for (let i = 0; i < frames; i++) {
    pcm[2 * i] = toInt16(audio.left[i]!);
    pcm[2 * i + 1] = toInt16(audio.right[i]!);
  }
  // An Int16Array holds the machine's byte order; WAV's is little-endian.
  const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  if (endianness() === 'BE') data.swap16();
  return Buffer.concat([buf, data]);
}

function toInt16(x: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(x * 32767)));
}

export async function writeWav(audio: Stereo, path: string): Promise<void> {
  await writeFile(path, wavBytes(audio));
}

/**
 * WAV to MP3 with LAME. The Xing/LAME header ffmpeg writes records the encoder delay and padding,
 * so decoders (and ffprobe's duration) give back exactly the WAV's frames; no ID3 tag or metadata,
 * so the bytes depend only on the samples.
 */
export async function encodeMp3(wav: string, out: string, env: RenderEnv): Promise<void> {
  await runFfmpeg(
    [
      '-i', wav,
      '-c:a', 'libmp3lame', '-b:a', MP3_BITRATE, '-ar', String(AUDIO_SAMPLE_RATE), '-ac', '2',
      '-fflags', '+bitexact', '-flags:a', '+bitexact', '-map_metadata', '-1', '-id3v2_version', '0',
      '-f', 'mp3', out,
    ],
    { signal: env.ctx.signal, ffmpegPath: await env.ffmpeg() },
  );
}

const PREVIEW_WIDTH = 640;
const PREVIEW_HEIGHT = 160;

/**
 * The waveform as a picture: for each column, the span from the lowest to the highest sample of
 * its stretch of time (the mid channel), with its RMS drawn brighter inside, on a dark ground.
 */
export async function writeWaveformPreview(audio: Stereo, hue: number, outDir: string): Promise<OutputFile> {
  const w = PREVIEW_WIDTH;
  const h = PREVIEW_HEIGHT;
  const img = Buffer.alloc(w * h * 3);
  const ground: Rgb = [16, 22, 32];
  const peak = hslToRgb(hue, 0.55, 0.45);
  const body = hslToRgb(hue, 0.7, 0.7);
  for (let i = 0; i < w * h; i++) img.set(ground, i * 3);
  const frames = audio.left.length;
  const mid = h / 2;
  for (let x = 0; x < w; x++) {
    const from = Math.floor((x * frames) / w);
    const to = Math.max(from + 1, Math.floor(((x + 1) * frames) / w));
    let lo = 0;
    let hi = 0;
    let sq = 0;
    for (let i = from; i < to; i++) {
      const s = (audio.left[i]! + audio.right[i]!) / 2;
      lo = Math.min(lo, s);
      hi = Math.max(hi, s);
      sq += s * s;
    }
    const rms = Math.sqrt(sq / (to - from));
    paint(img, w, x, mid - hi * mid, mid - lo * mid, peak);
    paint(img, w, x, mid - rms * mid, mid + rms * mid, body);
    img.set(body, (Math.floor(mid) * w + x) * 3);
  }
  await sharp(img, { raw: { width: w, height: h, channels: 3 } }).png().toFile(join(outDir, WAVEFORM_PREVIEW.name));
  return WAVEFORM_PREVIEW;
}

function paint(img: Buffer, w: number, x: number, top: number, bottom: number, colour: Rgb): void {
  const h = img.length / 3 / w;
  for (let y = Math.max(0, Math.floor(top)); y <= Math.min(h - 1, Math.ceil(bottom)); y++) img.set(colour, (y * w + x) * 3);
}

