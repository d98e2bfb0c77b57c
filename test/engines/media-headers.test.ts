import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { isYuv420p8, readJpegSize, readMp4Info, readPngSize } from '../helpers/media.js';
import { TempDirs } from './engine-harness.js';

/** The header readers other tests rely on, checked against files made by other tools. */

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const image = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#406080' } });

describe('image headers', () => {
  it('reads PNG and JPEG sizes, baseline and progressive', async () => {
    expect(readPngSize(await image(321, 123).png().toBuffer())).toEqual({ width: 321, height: 123 });
    expect(readJpegSize(await image(333, 77).jpeg().toBuffer())).toEqual({ width: 333, height: 77 });
    expect(readJpegSize(await image(65, 900).jpeg({ progressive: true }).toBuffer())).toEqual({ width: 65, height: 900 });
    expect(() => readPngSize(Buffer.from('nope'))).toThrow(/not a PNG/);
    expect(() => readJpegSize(Buffer.from('nope'))).toThrow(/not a JPEG/);
  });
});

describe('readMp4Info', () => {
  it('reads duration, tracks, codecs, frame size, sample counts and chroma format', async () => {
    const out = join(await dirs.make(), 'x.mp4');
    await runFfmpeg(
      [
        '-f', 'lavfi', '-i', 'testsrc=size=352x288:rate=25:duration=2',
        '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=2',
        '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p',
        '-c:a', 'aac', out,
      ],
      { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
    );
    const info = readMp4Info(await readFile(out));
    expect(info.durationSec).toBeGreaterThan(1.99);
    const [v, a] = info.tracks;
    expect(v).toMatchObject({ kind: 'video', handler: 'vide', codec: 'avc1', width: 352, height: 288, durationSec: 2, samples: 50 });
    // 4:4:4 is not yuv420p: the reader looks into the SPS, not only the profile.
    expect(v!.avc).toMatchObject({ profile: 244, chromaFormat: 3, bitDepth: 8 });
    expect(isYuv420p8(v!)).toBe(false);
    expect(a).toMatchObject({ kind: 'audio', handler: 'soun', codec: 'mp4a', sampleRate: 44100, channels: 1 });
    expect(a!.durationSec).toBeCloseTo(2, 1);
  });
});
