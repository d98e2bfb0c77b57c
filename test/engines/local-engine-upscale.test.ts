import { execFileSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe, probeFile } from '../../src/engines/media/ffprobe.js';
import type { ProbeReport } from '../../src/engines/media/ffprobe.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { rateText } from '../../src/engines/local/renderers/video-upscale-renderer.js';
import { ManualClock } from '../../src/lib/clock.js';
import { TempDirs, fakeContext, meanAbsDiff, runJob, solidPng, videoFrame } from './engine-harness.js';

/**
 * enhance/vendor-j/video-upscale on the local engine: every output read back with ffprobe (frame
 * size, frame rate, duration, streams), and the length the engine reports for billing.
 */

const U = 'enhance/vendor-j/video-upscale';
const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** A test pattern video made with ffmpeg: `size` at `rate` fps for `seconds`, with a tone if `audio`. */
async function source(size: string, rate: number, seconds: number, audio = false): Promise<Buffer> {
  const out = join(await dirs.make(), 'source.mp4');
  const tone = audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`] : [];
  await runFfmpeg(
    [
      '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${rate}:duration=${seconds}`,
      ...tone,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p',
      ...(audio ? ['-c:a', 'aac', '-shortest'] : []),
      out,
    ],
    { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
  );
  return readFile(out);
}

async function probe(path: string): Promise<ProbeReport> {
  return probeFile(await locateFfprobe(), path, 'mov', new AbortController().signal);
}

function videoStream(report: ProbeReport) {
  const v = report.streams.filter((s) => s.type === 'video');
  expect(v).toHaveLength(1);
  return v[0]!;
}

let plain25: Buffer;
let sound24: Buffer;
beforeAll(async () => {
  // 64x48: 2 s at 25 fps without sound; 2 s at 24 fps with a tone.
  [plain25, sound24] = await Promise.all([source('64x48', 25, 2), source('64x48', 24, 2, true)]);
});

describe('video-upscale', () => {
  it('doubles 64x48 to 128x96 by default, keeping its 25 fps and 2 s, and reports the length it made', async () => {
    const run = await runJob(engine, dirs, U, { video_url: 'v', output_format: 'mp4' }, { v: plain25 });
    expect(run.outputs).toEqual([{ name: 'output.mp4', contentType: 'video/mp4', durationUs: 2_000_000 }]);
    const report = await probe(run.path);
    const v = videoStream(report);
    expect({ codec: v.codec, width: v.width, height: v.height, fps: v.fps, frames: v.frames }).toEqual({ codec: 'h264', width: 128, height: 96, fps: 25, frames: 50 });
    expect(Math.abs(report.duration - 2)).toBeLessThan(1 / 25);
    expect(report.streams.filter((s) => s.type === 'audio')).toEqual([]);
    expect(run.ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    expect(run.ctx.stages[2]).toMatchObject({ preview: { name: 'preview.jpg' }, previewExisted: true });
  });

  it('scales by 1 and 4, and to fit a named resolution, portrait inputs turned', async () => {
    const cases: [Record<string, unknown>, Buffer, [number, number]][] = [
      [{ upscale_factor: 1 }, plain25, [64, 48]],
      [{ upscale_factor: 4 }, plain25, [256, 192]],
      [{ resolution: '720p' }, plain25, [960, 720]],
      [{ resolution: '1080p' }, await source('48x64', 24, 0.5), [1080, 1440]],
    ];
    for (const [fields, input, [width, height]] of cases) {
      const run = await runJob(engine, dirs, U, { video_url: 'v', ...fields }, { v: input });
      expect({ width: videoStream(await probe(run.path)).width, height: videoStream(await probe(run.path)).height }, JSON.stringify(fields)).toEqual({ width, height });
    }
  });

  it('re-times to target_fps 60 at twice the size, keeping the length and the sound track', async () => {
    const run = await runJob(engine, dirs, U, { video_url: 'v', upscale_factor: 2, target_fps: 60 }, { v: sound24 });
    // The input's length is its container's, which the AAC track makes a little longer than 2 s.
    const inputPath = join(await dirs.make(), 'in.mp4');
    await writeFile(inputPath, sound24);
    const length = (await probe(inputPath)).duration;
    const report = await probe(run.path);
    const v = videoStream(report);
    expect({ width: v.width, height: v.height, fps: v.fps, frames: v.frames }).toEqual({ width: 128, height: 96, fps: 60, frames: Math.round(length * 60) });
    expect(Math.abs(v.duration - length)).toBeLessThan(1 / 60);
    expect(Math.abs(report.duration - length)).toBeLessThan(1 / 60);
    const audio = report.streams.filter((s) => s.type === 'audio');
    expect(audio.map((a) => a.codec)).toEqual(['aac']);
    // ffprobe leaves out the AAC encoder's priming (1024 samples, 21 ms) that video-encode.ts trims for.
    expect(Math.abs(audio[0]!.duration - length)).toBeLessThan(1 / 24);
    expect(run.outputs[0]!.durationUs).toBe(Math.round(v.duration * 1_000_000));
  });

  it('makes the frames in between by interpolation: a moving box lands between its input places, not on one of them', async () => {
    // A white 8x8 box crossing black at 240 px/s: at 24 fps it jumps 10 px a frame.
    const out = join(await dirs.make(), 'moving.mp4');
    await runFfmpeg(
      [
        '-f', 'lavfi', '-i', 'color=c=black:s=64x48:r=24:d=1', '-f', 'lavfi', '-i', 'color=c=white:s=8x8:r=24:d=1',
        '-filter_complex', "[0][1]overlay=x='mod(t*240\\,56)':y=20", '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv420p', out,
      ],
      { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
    );
    const run = await runJob(engine, dirs, U, { video_url: 'v', upscale_factor: 1, target_fps: 60 }, { v: await readFile(out) });
    // Output frame 5 (t = 5/60 s) is input frame 2 (t = 2/24 s); frame 4 (t = 4/60 s) lies between input frames 1 and 2.
    const [in1, in2] = [await videoFrame(out, 1, dirs), await videoFrame(out, 2, dirs)];
    const [o4, o5] = [await videoFrame(run.path, 4, dirs), await videoFrame(run.path, 5, dirs)];
    expect(meanAbsDiff(o5, in2)).toBeLessThan(1.5);
    expect(meanAbsDiff(o4, in1)).toBeGreaterThan(3);
    expect(meanAbsDiff(o4, in2)).toBeGreaterThan(3);
  });

  it('picks frames when target_fps is below the input rate, and writes NTSC rates exactly', async () => {
    const src = await source('64x48', 50, 1);
    const run = await runJob(engine, dirs, U, { video_url: 'v', upscale_factor: 1, target_fps: 25 }, { v: src });
    expect(videoStream(await probe(run.path))).toMatchObject({ fps: 25, frames: 25 });
    expect(rateText(30000 / 1001)).toBe('30000/1001');
    expect(rateText(25)).toBe('25');
  });

  it('fails with input_too_large when the output frame would pass 3840 x 2160, before rendering', async () => {
    const ctx = fakeContext(await dirs.make(), { v: await source('1280x720', 24, 0.5) });
    const err = await engine.run({ id: 'j', model: U, request: { video_url: 'v', upscale_factor: 4 } }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({
      code: 'input_too_large',
      message: 'video_url is 1280 x 720 pixels; upscale_factor 4 would make 5120 x 2880, more than the 8,294,400 pixels (3840 x 2160) an output frame may have',
    });
    expect(ctx.stages).toEqual([]);
  });

  it('fails with input_too_large for an input longer than the 60 s its hold covers, even where the server takes longer ones', async () => {
    const lenient = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, limits: { videoSeconds: 600 } });
    const ctx = fakeContext(await dirs.make(), { v: await source('32x24', 1, 61) });
    const err = await lenient.run({ id: 'j', model: U, request: { video_url: 'v' } }, ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'input_too_large', message: 'video_url lasts 61 s; this model takes at most 60 s' });
  });

  it('fails with input_invalid when video_url is an image', async () => {
    const ctx = fakeContext(await dirs.make(), { v: await solidPng(64, 48, '#00ff00') });
    const err = await engine.run({ id: 'j', model: U, request: { video_url: 'v' } }, ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'input_invalid', message: 'video_url is a PNG image, not a video file; send an MP4, MOV or WebM file' });
    expect(ctx.stages).toEqual([]);
  });

  it('kills its ffmpeg when cancelled mid-render and rejects with the reason', async () => {
    const long = await source('320x240', 24, 20);
    const ctx = fakeContext(await dirs.make(), { v: long });
    const run = engine.run({ id: 'j', model: U, request: { video_url: 'v', upscale_factor: 4, target_fps: 60 } }, ctx);
    run.catch(() => undefined);
    const rendering = () => execFileSync('ps', ['-ww', '-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(join(ctx.outDir, 'output.mp4')));
    await vi.waitFor(() => expect(rendering().length).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    const reason = new Error('cancelled while upscaling');
    ctx.controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(rendering()).toEqual([]);
    expect((await readdir(ctx.outDir)).filter((f) => f.startsWith('.work-'))).toEqual([]);
  });
});
