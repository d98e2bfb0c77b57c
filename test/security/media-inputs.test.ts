import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { EngineContext } from '../../src/engines/engine.js';
import { locateFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe, probeFile } from '../../src/engines/media/ffprobe.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import type { LocalEngineOptions } from '../../src/engines/local/local-engine.js';
import { videoInputArgs } from '../../src/engines/local/video/video-probe.js';
import { ManualClock, systemClock } from '../../src/lib/clock.js';
import { createInputLoader } from '../../src/worker/input-loader.js';
import type { InputLoader } from '../../src/worker/input-loader.js';
import { TempDirs, dataUri, fakeContext, solidPng } from '../engines/engine-harness.js';
import type { FakeContext } from '../engines/engine-harness.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { canaryServer, claimDuration, pngClaiming, tinyMp4 } from './media-fixtures.js';
import type { Canary } from './media-fixtures.js';

/**
 * Hostile media inputs (issue 12, points 1 to 3): files that ask the decoder to open other files
 * or URLs, files that claim far more than they hold, and what the client is told about them.
 * Everything here is real: real ffmpeg and ffprobe, real files, a real HTTP server on loopback.
 */

const C_EDIT = 'video/vendor-c/model-c-edit';
const A2 = 'image/vendor-a/model-a-2/medium';
const F = 'video/vendor-f/model-f';
const HLS_REFUSAL = 'init_video is an HLS playlist, not a video file; send an MP4, MOV or WebM file';

const dirs = new TempDirs();
let canary: Canary;
let loader: InputLoader;
/** Another tenant's finished output, where a playlist might point. */
let otherOutput: string;
let tiny: Buffer;
/** Every client-visible message this suite saw, checked at the end. */
const messages: string[] = [];

beforeAll(async () => {
  canary = await canaryServer();
  loader = createInputLoader({ allowPrivate: true, maxBytes: 50 * 1024 * 1024, timeoutMs: 10_000 });
  const root = await dirs.make();
  await mkdir(join(root, 'outputs', 'other-tenant'), { recursive: true });
  otherOutput = join(root, 'outputs', 'other-tenant', 'output.mp4');
  tiny = await tinyMp4(root);
  await writeFile(otherOutput, tiny);
});

afterAll(async () => {
  await canary.close();
  await loader.close();
  await dirs.cleanup();
});

/** A context whose inputs go through the worker's real loader (data: URIs and loopback fetches). */
async function realContext(): Promise<FakeContext> {
  const ctx = fakeContext(await dirs.make());
  const loadInput: EngineContext['loadInput'] = (url, field) => loader.load(url, field, ctx.signal);
  return Object.assign(ctx, { loadInput });
}

function engine(opts: Partial<LocalEngineOptions> = {}): LocalEngine {
  return new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, ...opts });
}

/** Runs the job to its failure; the failure must be an EngineError raised before `processing`. */
async function failure(e: LocalEngine, model: string, request: Record<string, unknown>): Promise<EngineError> {
  const ctx = await realContext();
  const err = await e.run({ id: 'job-1', model, request }, ctx).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(err, 'the job should have failed').toBeInstanceOf(EngineError);
  expect(ctx.stages).toEqual([]);
  messages.push((err as EngineError).message);
  return err as EngineError;
}

function hlsPlaylist(...segments: string[]): string {
  return ['#EXTM3U', '#EXT-X-TARGETDURATION:10', ...segments.flatMap((s) => ['#EXTINF:10,', s]), '#EXT-X-ENDLIST', ''].join('\n');
}

/** ffmpeg at debug level over `args`: everything it says it opened. */
function ffmpegSays(ffmpeg: string, args: string[]): string {
  return spawnSync(ffmpeg, ['-nostdin', '-hide_banner', '-loglevel', 'debug', ...args, '-f', 'null', '-'], { encoding: 'utf8' }).stderr;
}

describe('a video input is opened only as the container its bytes are', () => {
  it('control: plain ffmpeg given an HLS playlist opens the local file it names (the attack this suite stops)', async () => {
    const playlist = join(await dirs.make(), 'input-video');
    await writeFile(playlist, hlsPlaylist(otherOutput));
    expect(ffmpegSays(await locateFfmpeg(), ['-i', playlist])).toContain(`Opening '${otherOutput}' for reading`);
  });

  it('refuses an HLS playlist sent as a data: URI, naming what it is, and opens nothing it names', async () => {
    const before = canary.requests.length;
    const body = hlsPlaylist(otherOutput, `file://${otherOutput}`, `${canary.origin}/segment.ts`);
    const err = await failure(engine(), C_EDIT, { prompt: 'x', init_video: dataUri(Buffer.from(body), 'video/mp4') });
    expect(err).toMatchObject({ code: 'input_invalid', message: HLS_REFUSAL });
    expect(canary.requests.length).toBe(before);
  });

  it('refuses an HLS playlist fetched from a URL, and never fetches its segments', async () => {
    canary.serve('/list.m3u8', 'application/vnd.apple.mpegurl', hlsPlaylist(otherOutput, `${canary.origin}/segment.ts`));
    const before = canary.requests.length;
    const err = await failure(engine(), C_EDIT, { prompt: 'x', init_video: `${canary.origin}/list.m3u8` });
    expect(err).toMatchObject({ code: 'input_invalid', message: HLS_REFUSAL });
    expect(canary.requests.slice(before)).toEqual(['/list.m3u8']);
  });

  it.each([
    ['an ffconcat list', `ffconcat version 1.0\nfile '${otherOutput}'\n`, 'an ffmpeg concat list'],
    ['a bare concat list', `# made by hand\nfile '${otherOutput}'\nduration 10\n`, 'an ffmpeg concat list'],
    ['an SDP description', 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\nm=video 5004 RTP/AVP 96\r\n', 'an SDP session description'],
    ['a DASH manifest', '<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011"></MPD>', 'a DASH manifest'],
    ['a PNG image', 'png', 'a PNG image'],
  ])('refuses %s by name', async (_, body, what) => {
    const bytes = body === 'png' ? await solidPng(8, 8, '#f00') : Buffer.from(body);
    const err = await failure(engine(), C_EDIT, { prompt: 'x', init_video: dataUri(bytes, 'video/mp4') });
    expect(err).toMatchObject({ code: 'input_invalid', message: `init_video is ${what}, not a video file; send an MP4, MOV or WebM file` });
  });

  it('the decoders themselves, handed a playlist as the verified type, open nothing it names', async () => {
    // Defence in depth: were the sniffing wrong, the forced demuxer and the file-only protocol
    // list still keep ffprobe and ffmpeg from following the playlist.
    const path = join(await dirs.make(), 'input-video.mp4');
    await writeFile(path, hlsPlaylist(otherOutput, `${canary.origin}/segment.ts`));
    const before = canary.requests.length;
    const probe = probeFile(await locateFfprobe(), path, 'mov', new AbortController().signal);
    await expect(probe).rejects.toThrow();
    const said = ffmpegSays(await locateFfmpeg(), videoInputArgs({ path, demuxer: 'mov' }));
    expect(said).toMatch(/moov atom not found|Invalid data/);
    expect(said).not.toContain(otherOutput);
    expect(canary.requests.length).toBe(before);
  });

  it('still accepts a real MP4 (the same bytes the playlist pointed at) and renders it', async () => {
    const ctx = await realContext();
    const outputs = await engine().run({ id: 'j', model: C_EDIT, request: { prompt: 'x', init_video: dataUri(tiny, 'video/mp4'), ratio: '640:480' } }, ctx);
    expect(outputs[0]!.name).toBe('output.mp4');
  });
});

describe('decode budgets: claims are checked before decoding', () => {
  it('fails a tiny MP4 claiming ten hours with input_too_large at once', async () => {
    const liar = claimDuration(tiny, 36_000);
    expect(liar.length).toBeLessThan(2048);
    const started = performance.now();
    const err = await failure(engine(), C_EDIT, { prompt: 'x', init_video: dataUri(liar, 'video/mp4') });
    expect(err).toMatchObject({ code: 'input_too_large', message: 'init_video lasts 36000 s; at most 60 s are accepted' });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('fails a video whose frames are larger than the pixel limit', async () => {
    const big = await tinyMp4(await dirs.make(), { size: '4096x2304', seconds: 0.1 });
    const err = await failure(engine(), C_EDIT, { prompt: 'x', init_video: dataUri(big, 'video/mp4') });
    expect(err).toMatchObject({
      code: 'input_too_large',
      message: 'init_video has frames of 4096 x 2304 pixels; at most 8,294,400 pixels per frame are accepted',
    });
  });

  it('fails a video with more frames or streams than its limits', async () => {
    const frames = await failure(engine({ limits: { videoFrames: 10 } }), C_EDIT, { prompt: 'x', init_video: dataUri(tiny, 'video/mp4') });
    expect(frames).toMatchObject({ code: 'input_too_large', message: 'init_video has 24 frames; at most 10 are accepted' });
    const streams = await failure(engine({ limits: { streams: 0 } }), C_EDIT, { prompt: 'x', init_video: dataUri(tiny, 'video/mp4') });
    expect(streams).toMatchObject({ code: 'input_too_large', message: 'init_video has 1 streams; at most 0 are accepted' });
  });

  it('kills a decode that passes its wall-time budget, as input_too_large', async () => {
    const err = await failure(engine({ limits: { decodeWallMs: 1 } }), C_EDIT, { prompt: 'x', init_video: dataUri(tiny, 'video/mp4') });
    expect(err).toMatchObject({ code: 'input_too_large', message: 'init_video took longer to decode than its wall-time budget allows' });
    expect(err.detail).toMatch(/wall time/);
  });

  it.each([
    [A2, 'image_url', { prompt: 'x', aspect_ratio: '1:1' }],
    [F, 'start_image', { prompt: 'x' }],
  ])('fails a PNG claiming 100000 x 100000 pixels (%s %s) with input_too_large before decoding', async (model, field, base) => {
    const bomb = pngClaiming(100_000, 100_000);
    expect(bomb.length).toBeLessThan(1024);
    const started = performance.now();
    const err = await failure(engine(), model, { ...base, [field]: dataUri(bomb) });
    expect(err).toMatchObject({
      code: 'input_too_large',
      message: `${field} is 100000 x 100000 pixels; at most 50,000,000 pixels are accepted`,
    });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('image inputs are raster images read from their bytes only', () => {
  it.each([
    ['a file:// reference', (o: string) => `<image href="file://${o}" width="9" height="9"/>`],
    ['an http reference', (o: string) => `<image xlink:href="${canary.origin}/svg-ref.png" width="9" height="9"/>` + o.slice(0, 0)],
  ])('refuses an SVG with %s, and fetches nothing', async (_, element) => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="9" height="9">${element(otherOutput)}</svg>`;
    canary.serve('/svg-ref.png', 'image/png', await solidPng(9, 9, '#0f0'));
    const before = canary.requests.length;
    const err = await failure(engine(), A2, { prompt: 'x', aspect_ratio: '1:1', image_url: dataUri(Buffer.from(svg), 'image/png') });
    expect(err).toMatchObject({
      code: 'input_invalid',
      message: 'image_url is an SVG image, not a raster image; send a JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF file',
    });
    expect(canary.requests.length).toBe(before);
  });
});

describe('the raster formats image fields accept still decode', () => {
  it.each(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif'] as const)('%s', async (format) => {
    const image = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#3366cc' } })
      .toFormat(format)
      .toBuffer();
    const ctx = await realContext();
    const outputs = await engine().run({ id: 'j', model: A2, request: { prompt: 'x', aspect_ratio: '1:1', image_url: dataUri(image), strength: 0 } }, ctx);
    expect(outputs[0]!.name).toBe('output.png');
  });
});

describe('through the API', () => {
  it('a ten-hour claim fails the job with input_too_large and releases its hold', async () => {
    const t = await createTestApp({ worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), allowPrivateUrls: true } });
    try {
      const before = await expectLedgerConsistent(t.store, t.workspaceId);
      const res = await generate(t, C_EDIT, { prompt: 'x', init_video: dataUri(claimDuration(tiny, 36_000), 'video/mp4') });
      expect(res.statusCode, res.body).toBe(200);
      const { job_id } = res.json() as { job_id: string };
      const job = await waitFor(async () => {
        const j = (await get(t, `/jobs/${job_id}`)).json() as { status: string; error?: { code: string; message: string } };
        return j.status === 'failed' ? j : undefined;
      }, 'the job to fail');
      expect(job.error).toEqual({ code: 'input_too_large', message: 'init_video lasts 36000 s; at most 60 s are accepted' });
      const after = await expectLedgerConsistent(t.store, t.workspaceId);
      expect(after).toEqual({ balance: before.balance, held: 0 });
    } finally {
      await t.close();
    }
  });
});

describe('client-visible messages', () => {
  it('carry no server paths and no memory addresses', () => {
    expect(messages.length).toBeGreaterThan(10);
    for (const message of messages) {
      expect(message).not.toContain('/');
      expect(message).not.toMatch(/0x[0-9a-f]+/i);
      expect(message).not.toMatch(/\n\s+at /);
    }
  });
});
