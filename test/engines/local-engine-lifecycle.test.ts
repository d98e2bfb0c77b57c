import { execFileSync } from 'node:child_process';
import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { EngineStage } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import { TempDirs, fakeContext } from './engine-harness.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const imageJob = { id: 'j', model: A2, request: { prompt: 'a quiet bay', aspect_ratio: '4:3', resolution: '1K', seed: 1 } };

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const stagesOf = (ctx: { stages: { stage: EngineStage }[] }) => ctx.stages.map((s) => s.stage);

/** Command lines of this machine's processes that mention `text` (an output directory). */
function processesMentioning(text: string): string[] {
  return execFileSync('ps', ['-ww', '-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(text) && !line.startsWith('ps '));
}

function processWraps(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap').length;
}

describe('LocalEngine stages and latency', () => {
  it('spreads the latency over three waits on the clock, reporting each stage in order', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const engine = new LocalEngine({ clock, latencyMs: 300 });
    const ctx = fakeContext(await dirs.make());
    const run = engine.run(imageJob, ctx);

    await vi.waitFor(() => expect(clock.sleepers).toBe(1));
    clock.advance(99);
    await new Promise((r) => setTimeout(r, 20));
    expect(stagesOf(ctx)).toEqual([]);

    clock.advance(1);
    await vi.waitFor(() => {
      expect(stagesOf(ctx)).toEqual(['processing']);
      expect(clock.sleepers).toBe(1);
    });
    clock.advance(100);
    await vi.waitFor(() => {
      expect(stagesOf(ctx)).toEqual(['processing', 'sampling']);
      expect(clock.sleepers).toBe(1);
    });
    // Rendered, waiting out the last third before showing the preview.
    await access(join(ctx.outDir, 'output.png'));
    clock.advance(100);
    await expect(run).resolves.toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(ctx.stages).toEqual([
      { stage: 'processing' },
      { stage: 'sampling' },
      { stage: 'intermediate-complete', preview: { name: 'preview.jpg', contentType: 'image/jpeg' }, previewExisted: true },
    ]);
    // No scratch directory is left beside the outputs.
    expect((await readdir(ctx.outDir)).sort()).toEqual(['output.png', 'preview.jpg']);
  });

  it('splits a latency that does not divide by three without losing a millisecond', async () => {
    const clock = new ManualClock(0);
    const engine = new LocalEngine({ clock, latencyMs: 100 });
    const ctx = fakeContext(await dirs.make());
    const run = engine.run(imageJob, ctx);
    for (const [wait, stage] of [[33, 'processing'], [33, 'sampling']] as const) {
      await vi.waitFor(() => expect(clock.sleepers).toBe(1));
      clock.advance(wait);
      await vi.waitFor(() => expect(stagesOf(ctx)).toContain(stage));
    }
    await vi.waitFor(() => expect(clock.sleepers).toBe(1));
    clock.advance(33);
    await new Promise((r) => setTimeout(r, 20));
    expect(stagesOf(ctx)).not.toContain('intermediate-complete');
    clock.advance(1);
    await run;
    expect(stagesOf(ctx)).toContain('intermediate-complete');
  });

  it('rejects with the signal’s reason when aborted during a wait, reporting nothing more', async () => {
    const clock = new ManualClock(0);
    const engine = new LocalEngine({ clock, latencyMs: 3000 });
    const ctx = fakeContext(await dirs.make());
    const run = engine.run(imageJob, ctx);
    await vi.waitFor(() => expect(clock.sleepers).toBe(1));
    const reason = new Error('cancelled');
    ctx.controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(clock.sleepers).toBe(0);
    expect(ctx.stages).toEqual([]);
  });

  it('stops when the runner refuses a stage, writing no output', async () => {
    const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
    const refused = new Error('job was cancelled');
    const ctx = fakeContext(await dirs.make(), {}, (stage) => {
      if (stage === 'sampling') throw refused;
    });
    await expect(engine.run(imageJob, ctx)).rejects.toBe(refused);
    expect(await readdir(ctx.outDir)).toEqual([]);
  });

  it('fails an unknown model with engine_failed', async () => {
    const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
    const run = engine.run({ id: 'j', model: 'image/vendor-z/nope', request: {} }, fakeContext(await dirs.make()));
    await expect(run).rejects.toBeInstanceOf(EngineError);
    await expect(run).rejects.toMatchObject({ code: 'engine_failed' });
  });

  it('fails a video job with engine_failed when the configured ffmpeg cannot run', async () => {
    const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0, ffmpegPath: '/nonexistent/ffmpeg' });
    const run = engine.run({ id: 'j', model: 'video/vendor-f/model-f', request: { prompt: 'x' } }, fakeContext(await dirs.make()));
    // The client is told in general terms; the server log gets what failed and where.
    await expect(run).rejects.toMatchObject({
      code: 'engine_failed',
      message: 'the local engine failed while rendering',
      detail: expect.stringContaining('cannot run ffmpeg at /nonexistent/ffmpeg'),
    });
  });
});

describe('LocalEngine abort during sampling', () => {
  it('kills the running ffmpeg, rejects with the signal’s reason, and leaves no child process', async () => {
    const engine = new LocalEngine({ clock: new ManualClock(0), latencyMs: 0 });
    const ctx = fakeContext(await dirs.make());
    const before = processWraps();
    const run = engine.run(
      {
        id: 'j',
        model: 'video/vendor-d/model-d-fast',
        request: { prompt: 'a long render', aspect_ratio: '16:9', duration: 8, resolution: '1080p', generate_audio: true },
      },
      ctx,
    );
    run.catch(() => undefined);
    // ffmpeg writes into the job's directory, so its command line names it.
    await vi.waitFor(() => expect(processesMentioning(ctx.outDir).length).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    expect(stagesOf(ctx)).toEqual(['processing', 'sampling']);

    const reason = new Error('cancelled while sampling');
    ctx.controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(processesMentioning(ctx.outDir)).toEqual([]);
    // The child has exited; Node releases its handle a moment later, in the loop's close phase.
    await vi.waitFor(() => expect(processWraps()).toBe(before), { timeout: 200 });
    expect(stagesOf(ctx)).toEqual(['processing', 'sampling']);
    expect((await readdir(ctx.outDir)).filter((f) => f.startsWith('.work-'))).toEqual([]);
  });
});
