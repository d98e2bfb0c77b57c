import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/domain/money.js';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe, probeFile } from '../../src/engines/media/ffprobe.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { waitFor } from '../helpers/scripted-engine.js';

/**
 * POST /generate/enhance/vendor-j/video-upscale through the server: its bodies, the hold of the
 * longest input it takes, and a run with a worker whose charge is the output's measured seconds.
 */

const U = 'enhance/vendor-j/video-upscale';
/** per_second_double + per_second_interpolation, for the 60 s the hold covers. */
const RATE_2X_FPS = 40_000 + 20_000;
const HOLD_2X_FPS = RATE_2X_FPS * 60;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

let dir: string;
let clip: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagen-upscale-'));
  const out = join(dir, 'clip.mp4');
  // 64x48, 2 s at 24 fps, with a tone.
  await runFfmpeg(
    [
      '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=24:duration=2', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=2',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', out,
    ],
    { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
  );
  clip = await readFile(out);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const dataUri = (bytes: Buffer, type: string) => `data:${type};base64,${bytes.toString('base64')}`;
const VIDEO = 'https://assets.example/input.mp4';

describe('POST /generate/enhance/vendor-j/video-upscale', () => {
  it('refuses bad bodies with 400 naming the field', async () => {
    t = await createTestApp();
    const cases: [Json, string][] = [
      [{}, "missing required property 'video_url'"],
      [{ video_url: VIDEO, upscale_factor: 2, resolution: '1080p' }, "'upscale_factor' and 'resolution' cannot be given together; give one of them"],
      [{ video_url: VIDEO, upscale_factor: 3 }, "'upscale_factor' must be one of 1, 2, 4"],
      [{ video_url: VIDEO, resolution: '8k' }, `'resolution' must be one of "720p", "1080p", "1440p", "4k"`],
      [{ video_url: VIDEO, target_fps: 61 }, "'target_fps' must be <= 60"],
      [{ video_url: VIDEO, target_fps: 12 }, "'target_fps' must be >= 24"],
      [{ video_url: VIDEO, target_fps: 30.5 }, "'target_fps' must be integer"],
      [{ video_url: VIDEO, output_format: 'mov' }, `'output_format' must be one of "mp4"`],
      [{ video_url: 'file:///etc/passwd' }, "'video_url' must be an http(s) URL or a base64 data: URI"],
      [{ video_url: VIDEO, prompt: 'sharper' }, "unknown property 'prompt'"],
    ];
    for (const [body, message] of cases) expect(errorOf(await generate(t, U, body), 400), JSON.stringify(body)).toBe(message);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toEqual([]);
  });

  it('holds the rate of the longest input it takes (60 s) at admission, by tier', async () => {
    t = await createTestApp();
    const cases: [Json, number][] = [
      [{ video_url: VIDEO }, 40_000 * 60],
      [{ video_url: VIDEO, upscale_factor: 1 }, 20_000 * 60],
      [{ video_url: VIDEO, upscale_factor: 4, target_fps: 60 }, (80_000 + 20_000) * 60],
      [{ video_url: VIDEO, resolution: '720p' }, 20_000 * 60],
      [{ video_url: VIDEO, resolution: '1080p', target_fps: 30 }, HOLD_2X_FPS],
      [{ video_url: VIDEO, resolution: '4k' }, 80_000 * 60],
    ];
    for (const [body, hold] of cases) {
      const res = await generate(t, U, body);
      expect(res.statusCode, res.body).toBe(200);
      const { job_id } = res.json() as { job_id: string };
      const entry = (await t.store.billing.listEntries(t.workspaceId)).find((e) => e.jobId === job_id && e.kind === 'hold');
      expect(entry?.amountMicros, JSON.stringify(body)).toBe(hold);
    }
  });

  it('answers 402 when the balance covers the real length but not the hold', async () => {
    t = await createTestApp({ balanceMicros: HOLD_2X_FPS - 1 });
    const res = await generate(t, U, { video_url: VIDEO, upscale_factor: 2, target_fps: 30 });
    expect(errorOf(res, 402)).toMatch(/^insufficient API balance: this request costs \$3\.600000 and the workspace has \$3\.599999 available/);
  });

  it('runs with a worker: 128x96 at 30 fps, the input length and sound kept, charged its output seconds and the rest released', { timeout: 60_000 }, async () => {
    t = await createTestApp({ balanceMicros: 10_000_000, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 1 } });
    const app = t;
    const res = await generate(app, U, { video_url: dataUri(clip, 'video/mp4'), upscale_factor: 2, target_fps: 30 });
    expect(res.statusCode, res.body).toBe(200);
    const { job_id } = res.json() as { job_id: string };
    type Job = { status: string; result?: { urls: string[] }; error?: unknown };
    const job = await waitFor(async () => {
      const j = (await get(app, `/jobs/${job_id}`)).json() as Job;
      return j.status === 'completed' || j.status === 'failed' ? j : undefined;
    }, 'the upscale to end', 50_000);
    expect(job.error, JSON.stringify(job.error)).toBeUndefined();

    const out = await app.app.inject({ method: 'GET', url: new URL(job.result!.urls[0]!).pathname });
    expect(out.statusCode).toBe(200);
    expect(out.headers['content-type']).toBe('video/mp4');
    const path = join(dir, `${job_id}.mp4`);
    await writeFile(path, out.rawPayload);
    const report = await probeFile(await locateFfprobe(), path, 'mov', new AbortController().signal);
    const video = report.streams.find((s) => s.type === 'video')!;
    expect({ width: video.width, height: video.height, fps: video.fps, frames: video.frames }).toEqual({ width: 128, height: 96, fps: 30, frames: 60 });
    expect(Math.abs(report.duration - 2)).toBeLessThan(1 / 30);
    expect(report.streams.filter((s) => s.type === 'audio').map((s) => s.codec)).toEqual(['aac']);

    // The charge is the rate times the output's seconds (2 s), not the 60 s held.
    const charge = Math.ceil((RATE_2X_FPS * Math.round(video.duration * 1_000_000)) / 1_000_000);
    expect(charge).toBe(120_000);
    const entries = (await app.store.billing.listEntries(app.workspaceId)).filter((e) => e.jobId === job_id);
    expect(entries.map((e) => [e.kind, e.amountMicros]).sort()).toEqual([['charge', charge], ['hold', HOLD_2X_FPS], ['release', HOLD_2X_FPS - charge]]);
    expect(await expectLedgerConsistent(app.store, app.workspaceId)).toEqual({ balance: 10_000_000 - charge, held: 0 });
    const usage = (await get(app, '/usage')).json() as { items: { job_id: string; cost_usd: string; compute_units: number }[] };
    expect(usage.items).toEqual([expect.objectContaining({ job_id, cost_usd: formatUsd(charge), compute_units: charge / 10_000 })]);
  });

  it('fails the job with input_invalid when video_url is an image, and charges nothing', { timeout: 60_000 }, async () => {
    t = await createTestApp({ balanceMicros: 10_000_000, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 1 } });
    const app = t;
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const { job_id } = (await generate(app, U, { video_url: dataUri(png, 'image/png') })).json() as { job_id: string };
    const job = await waitFor(async () => {
      const j = (await get(app, `/jobs/${job_id}`)).json() as { status: string; error?: { code: string; message: string } };
      return j.status === 'failed' ? j : undefined;
    }, 'the upscale to fail', 50_000);
    expect(job.error).toEqual({ code: 'input_invalid', message: 'video_url is a PNG image, not a video file; send an MP4, MOV or WebM file' });
    expect(await expectLedgerConsistent(app.store, app.workspaceId)).toEqual({ balance: 10_000_000, held: 0 });
  });
});
