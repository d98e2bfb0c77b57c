import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe } from '../../src/engines/media/ffprobe.js';
import { DEFAULT_MEDIA_LIMITS } from '../../src/engines/media/media-limits.js';
import type { MediaLimits } from '../../src/engines/media/media-limits.js';
import { MediaRefusal, REFUSALS, inspectMedia } from '../../src/engines/media/media-inspect.js';
import type { InspectDeps } from '../../src/engines/media/media-inspect.js';
import { sniffAsset, sniffImage } from '../../src/engines/media/media-types.js';
import { pngClaiming } from '../security/media-fixtures.js';
import { LAVFI_TONE, LAVFI_VIDEO, ffmpegFile, glbModel, heicImage, triangleGlb } from './asset-fixtures.js';
import { TempDirs } from './engine-harness.js';

/**
 * Asset inspection on real files: images made with sharp, sound and video with ffmpeg, a GLB and
 * a HEIC built by hand. Each refusal is checked for its reason and its client-safe message.
 */

const dirs = new TempDirs();
let dir: string;
let deps: InspectDeps;
afterAll(() => dirs.cleanup());
beforeAll(async () => {
  dir = await dirs.make();
  deps = { ffprobePath: await locateFfprobe(), ffmpegPath: await locateFfmpeg(), limits: DEFAULT_MEDIA_LIMITS, signal: new AbortController().signal };
});

let files = 0;
/** Writes `bytes` under a fresh name (the name is never what decides the type). */
async function file(bytes: Buffer | string, name = `upload-${files++}.bin`): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

/** A copy of the file at `path` cut to `fraction` of its length. */
async function cut(path: string, fraction: number): Promise<string> {
  const copy = await file(await readFile(path));
  await truncate(copy, Math.floor((await readFile(path)).length * fraction));
  return copy;
}

/** The refusal inspecting `path` ends with; fails the test if it is accepted or fails otherwise. */
async function refusal(path: string, over: Partial<InspectDeps> = {}): Promise<MediaRefusal> {
  const err = await inspectMedia(path, { ...deps, ...over }).then(
    (found) => new Error(`accepted as ${JSON.stringify(found)}`),
    (e: unknown) => e,
  );
  if (!(err instanceof MediaRefusal)) throw err;
  // Whatever went wrong, a client is never shown a server path or a tool's output.
  expect(err.message).not.toContain(dir);
  expect(err.message).not.toMatch(/ffmpeg|ffprobe|libheif|vips/i);
  return err;
}

const limits = (over: Partial<MediaLimits>): MediaLimits => ({ ...DEFAULT_MEDIA_LIMITS, ...over });
/** A binary that does not exist: a decode attempted with it would fail as a server fault, not a refusal. */
const NO_DECODER = '/nonexistent/ffmpeg';

describe('sniffAsset', () => {
  const bytes = (text: string) => Buffer.from(text, 'latin1');
  // An MPEG-1 Layer III frame header (128 kbit/s, 44.1 kHz): frames of 417 bytes.
  const frame = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);

  it.each([
    ['RIFF\x24\0\0\0WAVEfmt ', 'wav'],
    ['ID3\x04\0\0\0\0\x01\0', 'mp3'],
    ['glTF\x02\0\0\0', 'glb'],
    ['\0\0\0\x18ftypheic\0\0\0\0mif1heic', 'heic'],
    ['\0\0\0\x14ftypqt  \0\0\0\0', 'mov'],
    ['\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm', 'webm'],
  ])('knows %j as %s', (head, type) => {
    expect(sniffAsset(bytes(head))).toEqual({ ok: true, type });
  });

  it('knows MP3 without a tag by two frame headers in a row, and not by one sync word alone', () => {
    expect(sniffAsset(Buffer.concat([frame, frame, frame]))).toEqual({ ok: true, type: 'mp3' });
    expect(sniffAsset(Buffer.concat([frame, Buffer.alloc(900, 0x41)]))).toEqual({ ok: false, what: 'not a file type it accepts' });
  });

  it('names known formats it does not accept', () => {
    expect(sniffAsset(bytes('\0\0\0\x1cftypavif\0\0\0\0'))).toEqual({ ok: false, what: 'an AVIF image' });
    expect(sniffAsset(bytes('II*\0'))).toEqual({ ok: false, what: 'a TIFF image' });
    expect(sniffAsset(bytes('\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska'))).toEqual({ ok: false, what: 'a Matroska video' });
  });

  it('names sound and models sent to an image field', () => {
    expect(sniffImage(bytes('RIFF\x24\0\0\0WAVEfmt '))).toEqual({ ok: false, what: 'a WAV audio file' });
    expect(sniffImage(bytes('glTF\x02\0\0\0'))).toEqual({ ok: false, what: 'a GLB 3D model' });
  });
});

describe('images', () => {
  it.each([
    ['jpeg', 'image/jpeg', 'jpg'],
    ['png', 'image/png', 'png'],
    ['webp', 'image/webp', 'webp'],
  ] as const)('accepts a %s image with its size', async (format, mimeType, extension) => {
    const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366aa' } }).toFormat(format).toBuffer();
    expect(await inspectMedia(await file(bytes), deps)).toEqual({ kind: 'image', mimeType, extension, width: 40, height: 30, durationSeconds: null });
  });

  it('reports a JPEG with EXIF orientation 6 at its displayed size, width and height swapped', async () => {
    const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366aa' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(await inspectMedia(await file(bytes), deps)).toMatchObject({ mimeType: 'image/jpeg', width: 30, height: 40 });
  });

  it('knows a PNG by its bytes, whatever it is called', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } }).png().toBuffer();
    expect(await inspectMedia(await file(png, 'clip.mp4'), deps)).toMatchObject({ kind: 'image', mimeType: 'image/png', extension: 'png' });
  });

  it.each([
    ['png', 'PNG image'],
    ['jpeg', 'JPEG image'],
  ] as const)('refuses a truncated %s as invalid', async (format, name) => {
    // Noise does not compress: a cut through the middle loses real pixel data.
    const noise = Buffer.alloc(96 * 96 * 3).map(() => Math.floor(Math.random() * 256));
    const whole = await file(await sharp(noise, { raw: { width: 96, height: 96, channels: 3 } }).toFormat(format).toBuffer());
    const err = await refusal(await cut(whole, 0.6));
    expect(err.reason).toBe('invalid');
    expect(err.message).toBe(REFUSALS.damaged(name));
  });

  it('refuses an image over the pixel limit from its header, naming the size and the limit', async () => {
    // A hundred-byte PNG claiming 100 megapixels; decoding it would take gigabytes.
    const err = await refusal(await file(pngClaiming(10_000, 10_000)), { limits: limits({ imagePixels: 1_000_000 }) });
    expect(err.reason).toBe('too_large');
    expect(err.message).toBe('the file is 10000 x 10000 pixels; at most 1,000,000 pixels are accepted');
  });

  it('tries a HEIC, and when this build cannot decode HEVC says so and asks for JPEG or PNG', async () => {
    const path = await file(await heicImage(dir, 64, 48));
    const decodable = await sharp(path).stats().then(() => true, () => false);
    if (decodable) {
      expect(await inspectMedia(path, deps)).toEqual({ kind: 'image', mimeType: 'image/heic', extension: 'heic', width: 64, height: 48, durationSeconds: null });
    } else {
      const err = await refusal(path);
      expect(err.reason).toBe('unsupported');
      expect(err.message).toBe("this server's image library cannot decode HEIC images; convert the image to JPEG or PNG and upload that");
    }
  });
});

describe('sound and video', () => {
  it.each([
    ['mp4', 'video/mp4', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac']],
    ['mov', 'video/quicktime', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac']],
    ['webm', 'video/webm', ['-c:v', 'libvpx', '-deadline', 'realtime', '-c:a', 'libopus']],
  ] as const)('accepts a %s video with its frame size and duration', async (extension, mimeType, codecs) => {
    const path = await ffmpegFile(dir, `clip.${extension}`, [...LAVFI_VIDEO(1), ...LAVFI_TONE(1), ...codecs, '-shortest']);
    const found = await inspectMedia(path, deps);
    expect(found).toMatchObject({ kind: 'video', mimeType, extension, width: 64, height: 48 });
    expect(found.durationSeconds).toBeCloseTo(1, 1);
  });

  it('reports a video turned a quarter by its display matrix at its displayed size', async () => {
    const upright = await ffmpegFile(dir, 'upright.mp4', [...LAVFI_VIDEO(0.5), '-c:v', 'libx264', '-preset', 'ultrafast']);
    // This ffmpeg writes the rotation into the track header when copying, not when encoding.
    const path = await ffmpegFile(dir, 'turned.mp4', ['-i', upright, '-c', 'copy', '-metadata:s:v:0', 'rotate=90']);
    expect(await inspectMedia(path, deps)).toMatchObject({ mimeType: 'video/mp4', width: 48, height: 64 });
  });

  it.each([
    ['wav', 'audio/wav', ['-c:a', 'pcm_s16le']],
    ['mp3', 'audio/mpeg', ['-c:a', 'libmp3lame']],
  ] as const)('accepts %s audio with its duration and no frame size', async (extension, mimeType, codec) => {
    const found = await inspectMedia(await ffmpegFile(dir, `tone.${extension}`, [...LAVFI_TONE(1), ...codec]), deps);
    expect(found).toMatchObject({ kind: 'audio', mimeType, extension, width: null, height: null });
    expect(found.durationSeconds).toBeCloseTo(1, 1);
  });

  it('accepts an MP3 with cover art as audio, without decoding the picture', async () => {
    const cover = await file(await sharp({ create: { width: 16, height: 16, channels: 3, background: '#c00' } }).png().toBuffer(), 'cover.png');
    const path = await ffmpegFile(dir, 'with-cover.mp3', [...LAVFI_TONE(1), '-i', cover, '-map', '0:a', '-map', '1:v', '-c:a', 'libmp3lame', '-c:v', 'png', '-id3v2_version', '3']);
    expect(await inspectMedia(path, deps)).toMatchObject({ kind: 'audio', mimeType: 'audio/mpeg', width: null });
  });

  it.each([
    ['mp4', 'MP4 video', [...LAVFI_VIDEO(2), '-c:v', 'libx264', '-preset', 'ultrafast']],
    ['wav', 'WAV audio file', [...LAVFI_TONE(2), '-c:a', 'pcm_s16le']],
  ] as const)('refuses a truncated %s as invalid before decoding it', async (extension, name, args) => {
    const cutShort = await cut(await ffmpegFile(dir, `whole.${extension}`, args), 0.5);
    const err = await refusal(cutShort, { ffmpegPath: NO_DECODER });
    expect(err.reason).toBe('invalid');
    expect(err.message).toMatch(new RegExp(`^the file is a truncated or damaged ${name}: .* runs past the end of the file$`));
  });

  it('refuses an MP4 whose frames are damaged though its boxes are whole, by decoding it', async () => {
    // Noise keeps every frame large, so the overwritten bytes land in coded picture data.
    const path = await ffmpegFile(dir, 'noisy.mp4', ['-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=24:d=2,noise=alls=40:allf=t', '-c:v', 'libx264', '-preset', 'ultrafast']);
    const bytes = await readFile(path);
    // Pseudo-random bytes (an LCG): a short-period pattern such as (i * 7919) & 0xff happened to
    // decode as valid CAVLC in the file Debian's libx264 makes, on FFmpeg 4.1 and 5.1 alike.
    let x = 12345;
    for (let i = 0; i < 2000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bytes[Math.floor(bytes.length / 2) + i] = x >>> 24;
    }
    const err = await refusal(await file(bytes));
    expect(err).toMatchObject({ reason: 'invalid', message: REFUSALS.damaged('MP4 video') });
  });

  it('refuses an MP3 cut short, whose header still claims its whole length', async () => {
    const cutShort = await cut(await ffmpegFile(dir, 'whole.mp3', [...LAVFI_TONE(4), '-c:a', 'libmp3lame']), 0.5);
    const err = await refusal(cutShort);
    expect(err.reason).toBe('invalid');
    expect(err.message).toMatch(/^the file is a truncated or damaged MP3 audio file: it holds [12](\.\d+)? s of the 4(\.\d+)? s it claims$/);
  });

  it('refuses a video over the duration limit from its headers, without decoding it', async () => {
    const path = await ffmpegFile(dir, 'long.mp4', [...LAVFI_VIDEO(2), '-c:v', 'libx264', '-preset', 'ultrafast']);
    const err = await refusal(path, { limits: limits({ videoSeconds: 1 }), ffmpegPath: NO_DECODER });
    expect(err.reason).toBe('too_large');
    expect(err.message).toBe('the file lasts 2 s; at most 1 s are accepted');
  });

  it('holds sound to the same duration limit', async () => {
    const path = await ffmpegFile(dir, 'long.wav', [...LAVFI_TONE(2), '-c:a', 'pcm_s16le']);
    const err = await refusal(path, { limits: limits({ videoSeconds: 1 }), ffmpegPath: NO_DECODER });
    expect(err).toMatchObject({ reason: 'too_large', message: 'the file lasts 2 s; at most 1 s are accepted' });
  });

  it('refuses a file whose decode passes its wall-time budget as too large', async () => {
    const path = await ffmpegFile(dir, 'slow.mp4', [...LAVFI_VIDEO(1), '-c:v', 'libx264', '-preset', 'ultrafast']);
    const err = await refusal(path, { limits: limits({ decodeWallMs: 1 }) });
    expect(err).toMatchObject({ reason: 'too_large', message: REFUSALS.overBudget });
  });

  it('refuses an MP4 with sound only: a video must have a video stream', async () => {
    const path = await ffmpegFile(dir, 'sound-only.mp4', [...LAVFI_TONE(1), '-c:a', 'aac', '-f', 'mp4']);
    const err = await refusal(path);
    expect(err).toMatchObject({ reason: 'invalid', message: 'the file is not a usable MP4 video: it has no video stream' });
  });
});

describe('models', () => {
  it('accepts a binary glTF 2.0 model', async () => {
    expect(await inspectMedia(await file(triangleGlb()), deps)).toEqual({
      kind: 'model', mimeType: 'model/gltf-binary', extension: 'glb', width: null, height: null, durationSeconds: null,
    });
  });

  it('refuses a truncated GLB as invalid', async () => {
    const err = await refusal(await cut(await file(triangleGlb()), 0.8));
    expect(err.reason).toBe('invalid');
    expect(err.message).toMatch(/^the file is not a usable GLB model: it declares \d+ bytes but has \d+$/);
  });

  it('refuses a GLB that reads its buffer from another file: a stored asset could not supply it', async () => {
    const glb = glbModel({ asset: { version: '2.0' }, buffers: [{ uri: 'mesh.bin', byteLength: 36 }] });
    const err = await refusal(await file(glb));
    expect(err.message).toBe('the file is not a usable GLB model: its buffers refer to files outside it; upload a self-contained GLB');
  });

  it('refuses a GLB whose JSON is not glTF 2', async () => {
    const err = await refusal(await file(glbModel({ asset: { generator: 'x' } })));
    expect(err.message).toBe('the file is not a usable GLB model: its JSON has no asset.version');
  });
});

describe('unsupported files', () => {
  it.each([
    ['a GIF', () => sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).gif().toBuffer(), 'a GIF image'],
    ['an HLS playlist', () => '#EXTM3U\n#EXTINF:1,\nhttp://example.com/a.ts\n', 'an HLS playlist'],
    ['an SVG', () => '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', 'an SVG image'],
    ['a text file', () => 'just some words\n', 'a text file'],
  ])('refuses %s by name', async (_, make, what) => {
    const err = await refusal(await file(await make()));
    expect(err.reason).toBe('unsupported');
    expect(err.message).toBe(`the file is ${what}; upload JPEG, PNG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3`);
  });

  it('refuses an empty file', async () => {
    const err = await refusal(await file(''));
    expect(err).toMatchObject({ reason: 'unsupported', message: 'the file is empty; upload JPEG, PNG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3' });
  });

  it('refuses a Matroska video by name: WebM is the Matroska accepted', async () => {
    const path = await ffmpegFile(dir, 'clip.mkv', [...LAVFI_VIDEO(0.5), '-c:v', 'libx264', '-preset', 'ultrafast']);
    const err = await refusal(path);
    expect(err).toMatchObject({ reason: 'unsupported', message: `the file is a Matroska video; ${REFUSALS.accepted}` });
  });
});

describe('abort', () => {
  it('rejects with the signal’s reason, not a refusal, when aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    controller.abort(reason);
    await expect(inspectMedia(await file(triangleGlb()), { ...deps, signal: controller.signal })).rejects.toBe(reason);
  });
});
