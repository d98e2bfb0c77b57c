import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { planAudio } from '../../src/engines/local/audio/audio-plan.js';
import { sceneKey } from '../../src/engines/local/seed.js';
import { ManualClock } from '../../src/lib/clock.js';
import { correlation, decodePcm, pcmDistance, probeAudio, rms } from '../helpers/audio.js';
import { isPng, readPngSize } from '../helpers/media.js';
import type { RunResult } from './engine-harness.js';
import { TempDirs, fakeContext, meanAbsDiff, rgb, runJob } from './engine-harness.js';

/**
 * model-l-1 renders read back as a client would: ffprobe for codec, rate, channels and length,
 * ffmpeg's decoder for the samples themselves.
 */

const L = 'audio/vendor-l/model-l-1';
const RATE = 44_100;
/** One MP3 frame: the most a decoder's view of the length may differ by. */
const MP3_FRAME_SEC = 1152 / RATE;

const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const job = (request: Record<string, unknown>) => runJob(engine, dirs, L, { duration: 10, output_format: 'mp3', ...request });

/** Samples `from`..`to` seconds of interleaved stereo PCM. */
const seconds = (pcm: Int16Array, from: number, to: number) => pcm.subarray(Math.round(from * RATE) * 2, Math.round(to * RATE) * 2);

function expectStagesWithPreview(run: RunResult): void {
  expect(run.ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
  expect(run.ctx.stages[2]).toMatchObject({ preview: { name: 'preview.png', contentType: 'image/png' }, previewExisted: true });
}

let defaultMp3: Promise<RunResult> | undefined;
const mp3Run = () => (defaultMp3 ??= job({ prompt: 'calm piano with soft rain at night', seed: 7 }));

describe('model-l-1 formats', () => {
  it('renders the default 10 s as 44.1 kHz stereo MP3 at 192 kbit/s, within one MP3 frame of 10 s and decoding to exactly 10 s', async () => {
    const run = await mp3Run();
    expect(run.outputs).toEqual([{ name: 'output.mp3', contentType: 'audio/mpeg' }]);
    const probe = await probeAudio(run.path);
    expect(probe).toMatchObject({ formatName: 'mp3', codec: 'mp3', sampleRate: 44_100, channels: 2, bitRate: 192_000 });
    expect(Math.abs(probe.presentedSec - 10)).toBeLessThan(MP3_FRAME_SEC);
    // The LAME header records the encoder's delay and padding, so the decoder gives back every frame and no more.
    expect((await decodePcm(run.path)).length).toBe(10 * RATE * 2);
    expectStagesWithPreview(run);
  });

  it('renders WAV as 16-bit PCM of exactly duration x 44100 frames', async () => {
    const run = await job({ prompt: 'calm piano with soft rain at night', seed: 7, duration: 3, output_format: 'wav' });
    expect(run.outputs).toEqual([{ name: 'output.wav', contentType: 'audio/wav' }]);
    const probe = await probeAudio(run.path);
    expect(probe).toMatchObject({ formatName: 'wav', codec: 'pcm_s16le', sampleRate: 44_100, channels: 2 });
    expect(probe.presentedSec).toBe(3);
    expect(run.bytes.length).toBe(44 + 3 * RATE * 4);
    expect((await decodePcm(run.path)).length).toBe(3 * RATE * 2);
    expectStagesWithPreview(run);
  });

  it('renders the 1 s minimum and the 120 s maximum to length', async () => {
    const short = await job({ prompt: 'a bell', seed: 1, duration: 1, output_format: 'wav' });
    expect((await probeAudio(short.path)).presentedSec).toBe(1);
    const long = await job({ prompt: 'a long drone', seed: 1, duration: 120 });
    expect(Math.abs((await probeAudio(long.path)).presentedSec - 120)).toBeLessThan(MP3_FRAME_SEC);
  }, 60_000);

  it('encodes the same samples in both formats: the decoded MP3 follows the WAV of the same prompt and seed, sample for sample', async () => {
    const wav = await job({ prompt: 'calm piano with soft rain at night', seed: 7, output_format: 'wav' });
    const [fromWav, fromMp3] = [await decodePcm(wav.path), await decodePcm((await mp3Run()).path)];
    // Lossy, so not equal, but aligned (no encoder delay left in) and the same waveform.
    expect(correlation(fromWav, fromMp3)).toBeGreaterThan(0.95);
    expect(correlation(fromWav.subarray(2304), fromMp3.subarray(0, fromMp3.length - 2304))).toBeLessThan(0.5);
  });
});

describe('model-l-1 content', () => {
  it('is byte-identical for the same prompt and seed, in either format', async () => {
    const req = { prompt: 'a fast dance beat with bright synths', seed: 42, duration: 4 };
    const [a, b] = [await job({ ...req, output_format: 'wav' }), await job({ ...req, output_format: 'wav' })];
    expect(a.bytes.equals(b.bytes)).toBe(true);
    const [m1, m2] = [await job(req), await job(req)];
    expect(m1.bytes.equals(m2.bytes)).toBe(true);
  });

  it('differs with another seed, and with another prompt', async () => {
    const base = { prompt: 'a fast dance beat with bright synths', seed: 42, duration: 4, output_format: 'wav' };
    const [one, seed, prompt] = await Promise.all(
      [base, { ...base, seed: 43 }, { ...base, prompt: 'a slow sad cello in an empty hall' }].map(async (r) => decodePcm((await job(r)).path)),
    );
    expect(pcmDistance(one!, seed!)).toBeGreaterThan(0.02);
    expect(pcmDistance(one!, prompt!)).toBeGreaterThan(0.02);
  });

  it('is not silence: every second of it is above an RMS floor', async () => {
    for (const prompt of ['calm piano with soft rain at night', 'x', '!!!', 'thunder', 'fast energetic techno drums']) {
      const pcm = await decodePcm((await job({ prompt, seed: 3, duration: 4, output_format: 'wav' })).path);
      expect(rms(pcm), prompt).toBeGreaterThan(0.04);
      for (let s = 0; s < 4; s++) expect(rms(seconds(pcm, s, s + 1)), `${prompt}, second ${s}`).toBeGreaterThan(0.02);
    }
  });

  it('depends only on the prompt and seed: a shorter render is the start of a longer one, up to its fade-out', async () => {
    const req = { prompt: 'waves on a pebble beach', seed: 9, output_format: 'wav' };
    const [two, three] = [await decodePcm((await job({ ...req, duration: 2 })).path), await decodePcm((await job({ ...req, duration: 3 })).path)];
    expect(pcmDistance(seconds(two, 0, 1.5), seconds(three, 0, 1.5))).toBe(0);
    expect(pcmDistance(seconds(two, 1.9, 2), seconds(three, 1.9, 2))).toBeGreaterThan(0);
  });

  it('takes key, scale and tempo from the words and the arrangement from the seed', () => {
    const plan = (prompt: string, seed: number) => planAudio(prompt, sceneKey(L, { prompt, seed }));
    const [a, b] = [plan('morning birds over a quiet lake', 1), plan('morning birds over a quiet lake', 2)];
    expect({ bpm: b.bpm, rootHz: b.rootHz, scale: b.scaleName, melody: b.melody }).toEqual({ bpm: a.bpm, rootHz: a.rootHz, scale: a.scaleName, melody: a.melody });
    const arrangements = [1, 2, 3, 4, 5, 6].map((s) => JSON.stringify(plan('morning birds over a quiet lake', s)));
    expect(new Set(arrangements).size).toBeGreaterThan(1);
    // Tempo from the words' hash is 72..140 bpm; calm words slow it by 30 %, energetic ones speed it by 25 %.
    expect(plan('a calm gentle lullaby', 1).bpm).toBeLessThanOrEqual(98);
    expect(plan('fast energetic drums', 1).bpm).toBeGreaterThanOrEqual(90);
    expect(plan('fast energetic drums', 1).percussion).toBeGreaterThan(plan('calm gentle ambient', 1).percussion);
    expect(plan('heavy rain and wind', 1).noiseLevel).toBeGreaterThan(plan('a piano melody', 1).noiseLevel);
    expect(['minor', 'dorian', 'minor pentatonic']).toContain(plan('a sad dark night', 1).scaleName);
    expect(['major', 'mixolydian', 'major pentatonic']).toContain(plan('a happy sunny morning', 1).scaleName);
  });

  it('previews the waveform as a 640x160 PNG drawn from the samples', async () => {
    const run = await mp3Run();
    const png = await readFile(join(run.ctx.outDir, 'preview.png'));
    expect(isPng(png)).toBe(true);
    expect(readPngSize(png)).toEqual({ width: 640, height: 160 });
    // Drawn, not blank: the trace covers part of the picture, not all of it.
    const { channels } = await sharp(png).stats();
    expect(channels[2]!.stdev).toBeGreaterThan(20);
    const other = await job({ prompt: 'fast energetic techno drums', seed: 7 });
    const otherPng = join(other.ctx.outDir, 'preview.png');
    expect(meanAbsDiff(await rgb(png), await rgb(otherPng))).toBeGreaterThan(2);
  });
});

/** Command lines of this machine's processes that mention `text` (an output directory). */
function processesMentioning(text: string): string[] {
  return execFileSync('ps', ['-ww', '-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(text) && !line.startsWith('ps '));
}

describe('model-l-1 cancel', () => {
  it('stops the synthesis of a 120 s render mid-way: rejects with the reason, writes no output', async () => {
    const reason = new Error('cancelled while synthesising');
    const ctx = fakeContext(await dirs.make(), {}, (stage) => {
      if (stage === 'sampling') setTimeout(() => ctx.controller.abort(reason), 20);
    });
    const run = engine.run({ id: 'j', model: L, request: { prompt: 'a long drone', duration: 120, output_format: 'wav', seed: 1 } }, ctx);
    await expect(run).rejects.toBe(reason);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    // A WAV render writes output.wav straight into outDir once synthesis ends (a second or so for
    // 120 s): none there means the synthesis itself stopped, not merely the engine after it.
    expect(await readdir(ctx.outDir)).toEqual([]);
  });

  it('kills the MP3 encoder of a 120 s render: rejects with the reason and leaves no ffmpeg running', async () => {
    const reason = new Error('cancelled while encoding');
    const ctx = fakeContext(await dirs.make());
    const run = engine.run({ id: 'j', model: L, request: { prompt: 'a long drone', duration: 120, output_format: 'mp3', seed: 1 } }, ctx);
    run.catch(() => undefined);
    // ffmpeg reads the PCM from the job's scratch directory, so its command line names it. The
    // synthesis before it takes about 7 s alone, and has taken over 20 s in a loaded full run.
    await vi.waitFor(() => expect(processesMentioning(ctx.outDir).length).toBeGreaterThan(0), { timeout: 120_000, interval: 5 });
    ctx.controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(processesMentioning(ctx.outDir)).toEqual([]);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    expect((await readdir(ctx.outDir)).filter((f) => f.startsWith('.work-') || f === 'preview.png')).toEqual([]);
    // Bounds against a hang, not a speed: a full run at load 10 took the synthesis past 60 s.
  }, 150_000);
});
