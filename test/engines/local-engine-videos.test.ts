import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { isYuv420p8, readMp4Info } from '../helpers/media.js';
import type { Mp4Info } from '../helpers/media.js';
import type { RunResult } from './engine-harness.js';
import {
  TempDirs,
  colourDistance,
  dataUri,
  fakeContext,
  meanAbsDiff,
  meanColour,
  runJob,
  solidPng,
  videoFrame,
} from './engine-harness.js';

/**
 * Real renders with ffmpeg. Each render is shared by the assertions about it, and the requests
 * are chosen to cover every size tier and aspect ratio without rendering more than needed.
 */

const D = 'video/vendor-d/model-d-fast';
const E = 'video/vendor-e/model-e-1';
const F = 'video/vendor-f/model-f';
const C = 'video/vendor-c/model-c-edit';

const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

function video(info: Mp4Info) {
  const tracks = info.tracks.filter((t) => t.kind === 'video');
  expect(tracks).toHaveLength(1);
  return tracks[0]!;
}

function audio(info: Mp4Info) {
  return info.tracks.filter((t) => t.kind === 'audio');
}

/** The shape every local video has: one H.264 yuv420p track, 24 fps, exactly `seconds` long. */
function expectVideo(run: RunResult, width: number, height: number, seconds: number): Mp4Info {
  expect(run.outputs).toEqual([{ name: 'output.mp4', contentType: 'video/mp4' }]);
  const info = readMp4Info(run.bytes);
  const v = video(info);
  expect({ width: v.width, height: v.height }).toEqual({ width, height });
  expect(v.samples).toBe(seconds * 24);
  expect(v.durationSec).toBe(seconds);
  expect(isYuv420p8(v)).toBe(true);
  expect(info.durationSec).toBeCloseTo(seconds, 3);
  expect(run.ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
  expect(run.ctx.stages[2]).toMatchObject({ preview: { name: 'preview.jpg' }, previewExisted: true });
  return info;
}

const red = (w = 320, h = 240) => solidPng(w, h, '#ff0000');
const blue = (w = 320, h = 240) => solidPng(w, h, '#0000ff');

/** Rendered once: checked as a model-d-fast output, then edited as a model-c-edit input with audio. */
let dFastWithAudio: Promise<RunResult> | undefined;
function withAudio(): Promise<RunResult> {
  dFastWithAudio ??= runJob(engine, dirs, D, {
    prompt: 'waves at night',
    aspect_ratio: '16:9',
    duration: 4,
    generate_audio: true,
    resolution: '720p',
  });
  return dFastWithAudio;
}

describe('model-d-fast', () => {
  it('renders 720p 16:9 for 4 s with an AAC track of the same length when generate_audio is true', async () => {
    const info = expectVideo(await withAudio(), 1280, 720, 4);
    const [a] = audio(info);
    expect(audio(info)).toHaveLength(1);
    expect(a).toMatchObject({ codec: 'mp4a', sampleRate: 48000, channels: 2 });
    expect(Math.abs(a!.durationSec - 4)).toBeLessThan(1 / 24);
  });

  it('renders 1080p 9:16 for the default 8 s, with no audio track when generate_audio is false', async () => {
    const run = await runJob(engine, dirs, D, {
      prompt: 'waves at night',
      aspect_ratio: '9:16',
      duration: 8,
      generate_audio: false,
      resolution: '1080p',
    });
    const info = expectVideo(run, 1080, 1920, 8);
    expect(audio(info)).toEqual([]);
  });

  it('renders 720p 1:1 for 6 s starting on the start image and moving on to the scene', async () => {
    const run = await runJob(engine, dirs, D, {
      prompt: 'waves at night',
      aspect_ratio: '1:1',
      duration: 6,
      generate_audio: false,
      resolution: '720p',
      start_image: dataUri(await red()),
    });
    expectVideo(run, 720, 720, 6);
    expect(run.ctx.loaded).toEqual(['start_image']);
    const first = meanColour(await videoFrame(run.path, 0, dirs));
    const last = meanColour(await videoFrame(run.path, 143, dirs));
    expect(colourDistance(first, [255, 0, 0])).toBeLessThan(25);
    expect(colourDistance(last, [255, 0, 0])).toBeGreaterThan(100);
  });
});

describe('model-e-1', () => {
  it('renders std 16:9 for 5 s from the start image to the end image', async () => {
    const run = await runJob(engine, dirs, E, {
      prompt: 'a train crossing a bridge',
      duration: 5,
      aspect_ratio: '16:9',
      mode: 'std',
      start_image: 'https://in.test/red.png',
      end_image: 'https://in.test/blue.png',
      camera_control: { type: 'simple', config: { horizontal: 5 } },
    }, { 'https://in.test/red.png': await red(), 'https://in.test/blue.png': await blue(640, 200) });
    const info = expectVideo(run, 1280, 720, 5);
    expect(audio(info)).toEqual([]);
    expect(run.ctx.loaded).toEqual(['start_image', 'end_image']);
    const [first, middle, last] = await Promise.all([0, 60, 119].map(async (n) => meanColour(await videoFrame(run.path, n, dirs))));
    expect(colourDistance(first!, [255, 0, 0])).toBeLessThan(25);
    expect(colourDistance(last!, [0, 0, 255])).toBeLessThan(25);
    expect(colourDistance(middle!, [255, 0, 0])).toBeGreaterThan(80);
    expect(colourDistance(middle!, [0, 0, 255])).toBeGreaterThan(80);
  });

  it('renders std 9:16 for 10 s and pro 1:1 at 1080', async () => {
    const long = await runJob(engine, dirs, E, { prompt: 'a slow sunrise', duration: 10, aspect_ratio: '9:16', mode: 'std' });
    expectVideo(long, 720, 1280, 10);
    const pro = await runJob(engine, dirs, E, { prompt: 'a slow sunrise', duration: 5, aspect_ratio: '1:1', mode: 'pro' });
    expectVideo(pro, 1080, 1080, 5);
  });
});

describe('model-f', () => {
  it('renders 1280x720 for 5 s, byte-identical for an identical request, different for another prompt', async () => {
    const req = { prompt: 'paper boats on a pond', expand_prompt: true };
    const one = await runJob(engine, dirs, F, req);
    const two = await runJob(engine, dirs, F, req);
    const other = await runJob(engine, dirs, F, { ...req, prompt: 'a neon city in the rain' });
    const info = expectVideo(one, 1280, 720, 5);
    expect(audio(info)).toEqual([]);
    expect(one.bytes.equals(two.bytes)).toBe(true);
    expect(one.bytes.equals(other.bytes)).toBe(false);
    const [a, b] = [await videoFrame(one.path, 60, dirs), await videoFrame(other.path, 60, dirs)];
    expect(meanAbsDiff(a, b)).toBeGreaterThan(20);
  });

  it('moves: the first and last frames differ', async () => {
    const run = await runJob(engine, dirs, F, { prompt: 'paper boats on a pond' });
    const [first, last] = [await videoFrame(run.path, 0, dirs), await videoFrame(run.path, 119, dirs)];
    expect(meanAbsDiff(first, last)).toBeGreaterThan(10);
  });
});

describe('model-c-edit', () => {
  let source30fps: Buffer;
  beforeAll(async () => {
    // 2.5 s at 30 fps, 4:3, no audio: a different rate, length and shape from any output.
    const out = join(await dirs.make(), 'source.mp4');
    await runFfmpeg(
      ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=30:duration=2.5', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', out],
      { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
    );
    source30fps = await readFile(out);
  });

  it('keeps the input length, re-timed to 24 fps, at exactly the ratio size, with no audio when the input has none', async () => {
    const run = await runJob(engine, dirs, C, { prompt: 'make it look like winter', init_video: 'https://in.test/v.mp4', ratio: '1584:672', seed: 7 }, {
      'https://in.test/v.mp4': source30fps,
    });
    const info = expectVideo(run, 1584, 672, 2.5);
    expect(audio(info)).toEqual([]);
    expect(run.ctx.loaded).toEqual(['init_video']);
  });

  it('leans the grade toward the colour of init_image_url', async () => {
    const req = { prompt: 'make it look like winter', init_video: 'v', ratio: '640:480', seed: 7 };
    const plain = await runJob(engine, dirs, C, req, { v: source30fps });
    const leaned = await runJob(engine, dirs, C, { ...req, init_image_url: 'r' }, { v: source30fps, r: await red() });
    expect(leaned.ctx.loaded).toEqual(['init_video', 'init_image_url']);
    const [p, l] = [meanColour(await videoFrame(plain.path, 30, dirs)), meanColour(await videoFrame(leaned.path, 30, dirs))];
    expect(l[0] - p[0]).toBeGreaterThan(10);
  });

  it('edits to the exact size of every other ratio', async () => {
    const ratios = ['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '848:480', '640:480'];
    for (const ratio of ratios) {
      const [w, h] = ratio.split(':').map(Number);
      const run = await runJob(engine, dirs, C, { prompt: 'sepia', init_video: 'v', ratio, seed: 1 }, { v: source30fps });
      expectVideo(run, w!, h!, 2.5);
    }
    // Seven renders: a bound against a hang, which a full run at load 10 took past 30 s.
  }, 120_000);

  it('keeps the audio of an input that has some, at the same length, and grades visibly by prompt', async () => {
    const input = await withAudio();
    const edit = (prompt: string) => runJob(engine, dirs, C, { prompt, init_video: 'v', ratio: '960:960', seed: 3 }, { v: input.bytes });
    const [warm, cold] = [await edit('golden hour, warm'), await edit('blue steel night')];
    const info = expectVideo(warm, 960, 960, 4);
    expect(audio(info)).toHaveLength(1);
    expect(Math.abs(audio(info)[0]!.durationSec - 4)).toBeLessThan(1 / 24);
    const [a, b] = [await videoFrame(warm.path, 48, dirs), await videoFrame(cold.path, 48, dirs)];
    expect(meanAbsDiff(a, b)).toBeGreaterThan(8);
  }, 120_000);

  it('fails with input_invalid when init_video is not a video', async () => {
    const cases: [Buffer, string | RegExp][] = [
      [Buffer.from('definitely not a video'), 'init_video is a text file, not a video file; send an MP4, MOV or WebM file'],
      [await red(), 'init_video is a PNG image, not a video file; send an MP4, MOV or WebM file'],
      // An MP4 cut short: its type is right, its content unreadable.
      [(await withAudio()).bytes.subarray(0, 200), /^init_video is not a usable video: it (cannot be read as MP4|has no video stream)$/],
    ];
    for (const [bytes, message] of cases) {
      const ctx = fakeContext(await dirs.make(), { v: bytes });
      const err = await engine.run({ id: 'j', model: C, request: { prompt: 'x', init_video: 'v' } }, ctx).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err, String(err)).toMatchObject({ code: 'input_invalid', message: expect.stringMatching(message) });
      expect(ctx.stages).toEqual([]);
    }
  });
});
