import { describe, expect, it, vi } from 'vitest';
import { DecodeBudgetError, FfmpegError, locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import { locateFfprobe } from '../../src/engines/media/ffprobe.js';

describe('locateFfmpeg', () => {
  it('finds an ffmpeg that runs, and prefers an explicit path', async () => {
    const path = await locateFfmpeg();
    const stderr = await runFfmpeg(['-f', 'lavfi', '-i', 'nullsrc=d=0.1', '-f', 'null', '-'], {
      signal: new AbortController().signal,
      ffmpegPath: path,
    });
    expect(stderr).toBe('');
    expect(await locateFfmpeg('/opt/custom/ffmpeg')).toBe('/opt/custom/ffmpeg');
  });
});

describe('runFfmpeg', () => {
  it('rejects with the exit code and the last lines of stderr when ffmpeg fails', async () => {
    const run = runFfmpeg(['-i', '/nonexistent/input.mp4', '-f', 'null', '-'], {
      signal: new AbortController().signal,
      ffmpegPath: await locateFfmpeg(),
    });
    await expect(run).rejects.toBeInstanceOf(FfmpegError);
    await expect(run).rejects.toMatchObject({ exitCode: 1, stderrTail: expect.stringContaining('/nonexistent/input.mp4') });
  });

  it('rejects clearly when the binary cannot be started', async () => {
    const run = runFfmpeg(['-version'], { signal: new AbortController().signal, ffmpegPath: '/nonexistent/ffmpeg' });
    await expect(run).rejects.toThrow(/cannot run ffmpeg at \/nonexistent\/ffmpeg/);
  });

  it('kills the child on abort and rejects with the signal’s reason once it has exited', async () => {
    const controller = new AbortController();
    const run = runFfmpeg(['-re', '-f', 'lavfi', '-i', 'nullsrc=d=60', '-f', 'null', '-'], {
      signal: controller.signal,
      ffmpegPath: await locateFfmpeg(),
    });
    await new Promise((r) => setTimeout(r, 100));
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    // The child has exited; Node releases its handle a moment later, in the loop's close phase.
    await vi.waitFor(() => expect(process.getActiveResourcesInfo()).not.toContain('ProcessWrap'), { timeout: 200 });
  });

  it('does not start at all when the signal has already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('too late');
    controller.abort(reason);
    await expect(runFfmpeg(['-version'], { signal: controller.signal, ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toBe(reason);
  });
});

describe('decode budgets', () => {
  it('kills a run past its wall time and says so', async () => {
    const started = performance.now();
    const run = runFfmpeg(['-re', '-f', 'lavfi', '-i', 'nullsrc=d=60', '-f', 'null', '-'], {
      signal: new AbortController().signal,
      ffmpegPath: await locateFfmpeg(),
      budget: { wallMs: 300, cpuSeconds: 60 },
    });
    await expect(run).rejects.toBeInstanceOf(DecodeBudgetError);
    await expect(run).rejects.toMatchObject({ kind: 'wall' });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('stops a run past its CPU time (RLIMIT_CPU through -timelimit) and says so', async () => {
    // A slow preset on large frames: far more than one CPU second of work.
    const run = runFfmpeg(
      ['-f', 'lavfi', '-i', 'testsrc2=s=1920x1080:r=24:d=60', '-c:v', 'libx264', '-preset', 'veryslow', '-f', 'null', '-'],
      { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg(), budget: { wallMs: 20_000, cpuSeconds: 1 } },
    );
    await expect(run).rejects.toMatchObject({ name: 'DecodeBudgetError', kind: 'cpu' });
  });

  it('lets a run within its budget finish', async () => {
    const stderr = await runFfmpeg(['-f', 'lavfi', '-i', 'nullsrc=d=0.1', '-f', 'null', '-'], {
      signal: new AbortController().signal,
      ffmpegPath: await locateFfmpeg(),
      budget: { wallMs: 10_000, cpuSeconds: 10 },
    });
    expect(stderr).toBe('');
  });
});

describe('locateFfprobe', () => {
  it('finds an ffprobe that reports its version, and prefers an explicit path', async () => {
    const path = await locateFfprobe();
    const { execFileSync } = await import('node:child_process');
    expect(execFileSync(path, ['-hide_banner', '-version'], { encoding: 'utf8' })).toMatch(/^ffprobe version /);
    expect(await locateFfprobe('/opt/custom/ffprobe')).toBe('/opt/custom/ffprobe');
  });
});
