import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locateFfmpeg, runFfmpeg, runTool } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe } from '../../src/engines/media/ffprobe.js';

/** Audio files checked the way a client would: ffprobe for what they claim, ffmpeg for their samples. */

export interface AudioProbe {
  readonly formatName: string;
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: number;
  /** Seconds a player presents: the container's duration less the start offset (MP3 encoder delay). */
  readonly presentedSec: number;
  readonly bitRate: number;
}

export async function probeAudio(path: string): Promise<AudioProbe> {
  const { stdout } = await runTool(
    await locateFfprobe(),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path],
    { signal: new AbortController().signal, name: 'ffprobe', maxStdout: 1 << 20 },
  );
  const raw = JSON.parse(stdout) as {
    format: { format_name: string; duration: string; start_time?: string };
    streams: { codec_type: string; codec_name: string; sample_rate: string; channels: number; bit_rate?: string }[];
  };
  const audio = raw.streams.filter((s) => s.codec_type === 'audio');
  if (audio.length !== 1 || raw.streams.length !== 1) throw new Error(`expected one audio stream, got ${JSON.stringify(raw.streams)}`);
  const s = audio[0]!;
  return {
    formatName: raw.format.format_name,
    codec: s.codec_name,
    sampleRate: Number(s.sample_rate),
    channels: s.channels,
    presentedSec: Number(raw.format.duration) - Number(raw.format.start_time ?? 0),
    bitRate: Number(s.bit_rate ?? NaN),
  };
}

/** Every sample ffmpeg decodes from the file, as interleaved 16-bit stereo at 44.1 kHz. */
export async function decodePcm(path: string): Promise<Int16Array> {
  const dir = await mkdtemp(join(tmpdir(), 'mediagen-pcm-'));
  try {
    const out = join(dir, 'pcm.raw');
    await runFfmpeg(['-i', path, '-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '2', '-ar', '44100', out], {
      signal: new AbortController().signal,
      ffmpegPath: await locateFfmpeg(),
    });
    // Copied into a fresh ArrayBuffer, so the view is aligned whatever offset readFile's buffer has.
    const bytes = new Uint8Array(await readFile(out));
    return new Int16Array(bytes.buffer, 0, bytes.byteLength / 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Root mean square of the samples, 0 (silence) to 1 (full scale). */
export function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const s of pcm) sum += (s / 32768) ** 2;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

/** Mean absolute difference of two equally long sample arrays, on the same 0..1 scale. */
export function pcmDistance(a: Int16Array, b: Int16Array): number {
  if (a.length !== b.length) throw new Error(`pcmDistance: ${a.length} vs ${b.length} samples`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!) / 32768;
  return sum / Math.max(1, a.length);
}

/** Pearson correlation (about zero-mean audio) of two equally long sample arrays: 1 is the same waveform. */
export function correlation(a: Int16Array, b: Int16Array): number {
  if (a.length !== b.length) throw new Error(`correlation: ${a.length} vs ${b.length} samples`);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! ** 2;
    bb += b[i]! ** 2;
  }
  return ab / Math.sqrt(aa * bb || 1);
}
