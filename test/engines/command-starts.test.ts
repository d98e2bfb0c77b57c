import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandEngine } from '../../src/engines/command/command-engine.js';
import { COULD_NOT_START_MESSAGE, CommandCouldNotStart } from '../../src/engines/command/command-pool.js';
import type { EngineError } from '../../src/engines/engine.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Clock } from '../../src/lib/clock.js';
import { clientJobError } from '../../src/worker/job-errors.js';
import { FIXTURES, captureLog, commandContext, commandEngine, pngSize } from './command-fixtures.js';
import { TempDirs } from './engine-harness.js';

/**
 * A command whose processes cannot start (a missing Python module, a missing program, a script
 * that exits before `ready`), against real processes: restarts wait with the one backoff
 * (lib/backoff), the job waits while a process may still be ready before its deadline, then fails
 * `server_unavailable` saying the engine could not start; the cause goes to the log only. Time is
 * a ManualClock's, so each wait is seen whole and none is slept through.
 */

const MODEL = 'image/acme/fixture-v1';
const models = { [MODEL]: { schema: undefined, outputTypes: ['image/png'] } };
const dirs = new TempDirs();
const engines: CommandEngine[] = [];
let log = captureLog();

/** A ManualClock that records each sleep asked of it. */
class RecordingClock implements Clock {
  readonly manual = new ManualClock('2026-03-01T12:00:00Z');
  readonly sleeps: number[] = [];
  nowMs(): number {
    return this.manual.nowMs();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return this.manual.sleep(ms, signal);
  }
}

function engine(block: Record<string, unknown>, clock: Clock): CommandEngine {
  const e = commandEngine({ argv: ['python3', 'command-server.py'], ...block }, models, log, clock);
  engines.push(e);
  return e;
}

/** A run whose outcome can be looked at before it settles. */
function started(e: CommandEngine, outDir: string, deadlineMs: number, id = `job-${Math.random().toString(36).slice(2)}`) {
  const state: { settled: boolean; error?: unknown } = { settled: false };
  const promise = e.run({ id, model: MODEL, request: { act: 'ok', width: 3, height: 2 } }, commandContext(outDir, { deadlineMs }));
  promise.then(
    () => (state.settled = true),
    (err: unknown) => Object.assign(state, { settled: true, error: err }),
  );
  return { id, promise, state };
}

const failedStarts = () => log.lines.filter((l) => l.msg === 'command process ended before it was ready');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await pause(20)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

/** The waits before a restart: the start timeout's sleep (600 s by default) is not one. */
const restartWaits = (clock: RecordingClock) => clock.sleeps.filter((ms) => ms < 600_000);

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await dirs.cleanup();
  log = captureLog();
});

// Each start is a real Python process: seconds each on a loaded machine.
describe('command engine: processes that cannot start', { timeout: 90_000 }, () => {
  it('restarts a process missing a Python module after 1 s, 2 s, then 4 s while its job waits; the job then fails server_unavailable, the engine could not start, the traceback only in the log', async () => {
    const clock = new RecordingClock();
    const e = engine({ argv: ['python3', 'command-missing-module.py'] }, clock);
    const run = started(e, await dirs.make(), clock.nowMs() + 10_000);
    await until('the first failed start', () => failedStarts().length === 1);
    // Not started again before its wait is over.
    clock.manual.advance(999);
    await pause(300);
    expect(failedStarts()).toHaveLength(1);
    expect(e.pids).toEqual([]);
    clock.manual.advance(1);
    await until('the second failed start', () => failedStarts().length === 2);
    clock.manual.advance(2000);
    await until('the third failed start', () => failedStarts().length === 3);
    // 3 s in, a start at 7 s may still be ready before the deadline at 10 s: the job waits.
    await pause(50);
    expect(run.state).toEqual({ settled: false });
    clock.manual.advance(4000);
    await until('the fourth failed start', () => failedStarts().length === 4);
    // The next start would be at 15 s, past the deadline: the job fails now, without waiting for it.
    await until('the job to fail', () => run.state.settled);
    expect(restartWaits(clock)).toEqual([1000, 2000, 4000, 8000]);
    const err = run.state.error;
    expect(err).toBeInstanceOf(CommandCouldNotStart);
    expect((err as EngineError).code).toBe('server_unavailable');
    // What the client reads: the engine could not start; nothing of the server's paths or the traceback.
    expect(clientJobError(err)).toEqual({ code: 'server_unavailable', message: COULD_NOT_START_MESSAGE });
    expect(COULD_NOT_START_MESSAGE).not.toMatch(/\/|Module|python|command/i);
    // What the operator reads: each failed start with the end of its stderr, the traceback's cause last.
    const tail = failedStarts()[3]!.obj.stderrTail as string[];
    expect(tail.at(-1)).toBe("ModuleNotFoundError: No module named 'mediagen_fixture_missing_module'");
    expect(tail.join('\n')).toContain(join(FIXTURES, 'command-missing-module.py'));
    expect(failedStarts().every((l) => l.level === 'error' && (l.obj.exit as { code: number }).code === 1)).toBe(true);
    expect(log.lines.some((l) => l.level === 'warn' && l.obj.jobId === run.id && l.msg.includes('could start before'))).toBe(true);
  });

  it('keeps a job waiting through failed starts and runs it once a start succeeds (the install mended); a job whose deadline comes before the next start fails at once', async () => {
    const clock = new RecordingClock();
    const blocker = join(await dirs.make(), 'broken');
    await writeFile(blocker, '');
    const e = engine({ env: { FIXTURE_FAIL_START_WHILE: blocker } }, clock);
    const dir = await dirs.make();
    const run = started(e, dir, clock.nowMs() + 600_000);
    await until('the first failed start', () => failedStarts().length === 1);
    clock.manual.advance(1000);
    await until('the second failed start', () => failedStarts().length === 2);
    clock.manual.advance(2000);
    await until('the third failed start', () => failedStarts().length === 3);
    await pause(50);
    expect(run.state).toEqual({ settled: false });
    // The next start is 4 s away; a job with 3 s left cannot be served by it.
    const late = started(e, await dirs.make(), clock.nowMs() + 3000);
    await until('the late job to fail', () => late.state.settled);
    expect(late.state.error).toBeInstanceOf(CommandCouldNotStart);
    expect(failedStarts()).toHaveLength(3);
    await rm(blocker);
    clock.manual.advance(4000);
    const [out] = await run.promise;
    expect(pngSize(await readFile(join(dir, out!.name)))).toEqual({ width: 3, height: 2 });
    expect(e.pids).toHaveLength(1);
    expect(log.lines.some((l) => l.msg === 'command process ready')).toBe(true);
  });

  for (const [what, block, cause] of [
    ['a program that does not exist', { argv: ['./no-such-program'] }, (l: { obj: Record<string, unknown> }) => (l.obj.err as { code?: string } | undefined)?.code === 'ENOENT'],
    ['a script that exits before it is ready', { env: { FIXTURE_FAIL_START: '1' } }, (l: { obj: Record<string, unknown> }) => JSON.stringify(l.obj.stderrTail) === '["cannot load the model"]'],
  ] as const) {
    it(`fails the job server_unavailable after the starts its deadline allows: ${what}, the cause in the log`, async () => {
      const clock = new RecordingClock();
      const e = engine(block, clock);
      // A start at 1 s may be ready before the deadline at 2.5 s; one at 3 s may not.
      const run = started(e, await dirs.make(), clock.nowMs() + 2500);
      await until('the first failed start', () => failedStarts().length === 1);
      await pause(50);
      expect(run.state).toEqual({ settled: false });
      clock.manual.advance(1000);
      await until('the job to fail', () => run.state.settled);
      expect(failedStarts()).toHaveLength(2);
      expect(run.state.error).toBeInstanceOf(CommandCouldNotStart);
      expect(clientJobError(run.state.error)).toEqual({ code: 'server_unavailable', message: COULD_NOT_START_MESSAGE });
      expect(log.lines.some(cause)).toBe(true);
    });
  }
});
