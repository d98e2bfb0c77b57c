import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { probeAudio } from '../helpers/audio.js';
import { isJpeg, isPng, isYuv420p8, readJpegSize, readMp4Info, readPngSize } from '../helpers/media.js';
import { waitFor } from '../helpers/scripted-engine.js';

/**
 * Every generation endpoint, through the whole server: HTTP, admission, the worker, the local
 * engine, output files, and the output URL read back over HTTP. Files are checked by their headers.
 */
type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: { code: string; message: string } };

let t: TestApp;
let inputs: Server;
let inputBase = '';
const served = new Map<string, Buffer>();

beforeAll(async () => {
  // Inputs come from a real HTTP server on loopback, allowed here by --allow-private-urls, which
  // the API (at the door) and the worker (at connect time) both honour.
  t = await createTestApp({ allowPrivateUrls: true, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2, allowPrivateUrls: true } });
  inputs = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  inputs.listen(0, '127.0.0.1');
  await once(inputs, 'listening');
  inputBase = `http://127.0.0.1:${(inputs.address() as AddressInfo).port}`;
  served.set('/red.png', await sharp({ create: { width: 64, height: 48, channels: 3, background: '#d02020' } }).png().toBuffer());
}, 60_000);

afterAll(async () => {
  inputs.closeAllConnections();
  await new Promise((r) => inputs.close(r));
  await t.close();
});

async function run(model: string, body: object): Promise<{ job: Job; file: Buffer; contentType: string }> {
  const res = await generate(t, model, body);
  expect(res.statusCode, res.body).toBe(200);
  const { job_id } = res.json() as Job;
  const job = await waitFor(async () => {
    const j = (await get(t, `/jobs/${job_id}`)).json() as Job;
    return j.status === 'completed' || j.status === 'failed' ? j : undefined;
  }, `job ${job_id} to end`, 60_000);
  expect(job.error, JSON.stringify(job.error)).toBeUndefined();
  const out = await t.app.inject({ method: 'GET', url: new URL(job.result!.urls[0]!).pathname });
  expect(out.statusCode).toBe(200);
  return { job, file: out.rawPayload, contentType: String(out.headers['content-type']) };
}

describe('every endpoint runs to a real file', { timeout: 120_000 }, () => {
  it.each(['medium', 'large', 'medium-turbo'])('model-a-2 %s: a PNG at the 1K size of its aspect ratio', async (tier) => {
    const { file, contentType } = await run(`image/vendor-a/model-a-2/${tier}`, { prompt: 'a fox', aspect_ratio: '4:5', resolution: '1K' });
    expect(contentType).toBe('image/png');
    expect(isPng(file)).toBe(true);
    expect(readPngSize(file)).toEqual({ width: 896, height: 1120 });
  });

  it('model-a-2 with an image_url fetched over HTTP', async () => {
    const { file } = await run('image/vendor-a/model-a-2/medium', { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K', image_url: `${inputBase}/red.png`, strength: 0.2 });
    const { dominant } = await sharp(file).stats();
    // Mostly the red input image, since strength 0.2 keeps 80 % of it.
    expect(dominant.r).toBeGreaterThan(dominant.g + 60);
  });

  it('model-b-1: a JPEG of exactly width x height when asked for jpeg', async () => {
    const { file, contentType } = await run('image/vendor-b/model-b-1', { prompt: 'a fox', width: 640, height: 960, output_format: 'jpeg' });
    expect(contentType).toBe('image/jpeg');
    expect(isJpeg(file)).toBe(true);
    expect(readJpegSize(file)).toEqual({ width: 640, height: 960 });
  });

  it('model-d-fast: H.264 yuv420p at 1080p 9:16 for 4 s with an AAC track', async () => {
    const { file, contentType } = await run('video/vendor-d/model-d-fast', { prompt: 'waves', aspect_ratio: '9:16', resolution: '1080p', duration: 4, generate_audio: true });
    expect(contentType).toBe('video/mp4');
    const info = readMp4Info(file);
    const video = info.tracks.find((tr) => tr.kind === 'video')!;
    expect(video).toMatchObject({ codec: 'avc1', width: 1080, height: 1920 });
    expect(isYuv420p8(video)).toBe(true);
    expect(video.durationSec).toBeCloseTo(4, 2);
    expect(info.tracks.filter((tr) => tr.kind === 'audio').map((tr) => tr.codec)).toEqual(['mp4a']);
  });

  it('model-e-1: 5 s at 1:1, no audio', async () => {
    const info = readMp4Info((await run('video/vendor-e/model-e-1', { prompt: 'a kite', aspect_ratio: '1:1' })).file);
    const video = info.tracks.find((tr) => tr.kind === 'video')!;
    expect(video.width).toBe(video.height);
    expect(video.durationSec).toBeCloseTo(5, 2);
    expect(info.tracks.some((tr) => tr.kind === 'audio')).toBe(false);
  });

  it('model-f then model-c-edit: the edit of a fetched video keeps its length at the requested ratio', async () => {
    const source = await run('video/vendor-f/model-f', { prompt: 'a street' });
    const sourceInfo = readMp4Info(source.file);
    // model-f has one fixed shape (docs/engine.md): 1280x720, 5 s, no audio.
    expect(sourceInfo.tracks.map((tr) => [tr.kind, tr.width, tr.height])).toEqual([['video', 1280, 720]]);
    expect(sourceInfo.tracks[0]!.durationSec).toBeCloseTo(5, 2);
    served.set('/source.mp4', source.file);
    const edit = await run('video/vendor-c/model-c-edit', { prompt: 'make it night', init_video: `${inputBase}/source.mp4`, ratio: '960:960' });
    const info = readMp4Info(edit.file);
    const video = info.tracks.find((tr) => tr.kind === 'video')!;
    expect(video).toMatchObject({ codec: 'avc1', width: 960, height: 960 });
    expect(video.durationSec).toBeCloseTo(sourceInfo.tracks.find((tr) => tr.kind === 'video')!.durationSec, 1);
  });
});

describe('audio through the server', { timeout: 120_000 }, () => {
  it('model-l-1: the default MP3 served as audio/mpeg, 44.1 kHz stereo, within one MP3 frame of the duration', async () => {
    const { job, file, contentType } = await run('audio/vendor-l/model-l-1', { prompt: 'soft rain and a slow piano', duration: 3, seed: 5 });
    expect(contentType).toBe('audio/mpeg');
    expect(job.result!.urls).toHaveLength(1);
    expect(new URL(job.result!.urls[0]!).pathname).toMatch(/\/output\.mp3$/);
    const path = join(await mkdtemp(join(tmpdir(), 'mediagen-audio-')), 'served.mp3');
    await writeFile(path, file);
    const probe = await probeAudio(path);
    expect(probe).toMatchObject({ codec: 'mp3', sampleRate: 44_100, channels: 2 });
    expect(Math.abs(probe.presentedSec - 3)).toBeLessThan(1152 / 44_100);
    await rm(dirname(path), { recursive: true, force: true });
  });
});

describe('inputs that cannot be used fail the job with a clear error', () => {
  const failed = async (model: string, body: object) => {
    const { job_id } = (await generate(t, model, body)).json() as Job;
    return waitFor(async () => {
      const j = (await get(t, `/jobs/${job_id}`)).json() as Job;
      return j.status === 'failed' ? j : undefined;
    }, `job ${job_id} to fail`, 30_000);
  };

  it('an input URL that answers 404 fails with input_fetch_failed naming the field', async () => {
    const job = await failed('video/vendor-f/model-f', { prompt: 'x', start_image: `${inputBase}/missing.png` });
    expect(job.error).toEqual({ code: 'input_fetch_failed', message: expect.stringMatching(/^start_image: .*404/) });
    expect(job).not.toHaveProperty('result');
  });

  it('bytes that are not an image fail with input_invalid', async () => {
    served.set('/junk.png', Buffer.from('this is not a picture'));
    const job = await failed('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', image_url: `${inputBase}/junk.png` });
    expect(job.error).toMatchObject({ code: 'input_invalid', message: expect.stringContaining('image_url') });
  });
});
