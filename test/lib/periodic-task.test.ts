import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';
import { PeriodicTask, jitteredMs } from '../../src/lib/periodic-task.js';

const MINUTE = 60_000;

/**
 * A ManualClock that says when someone starts sleeping on it and for how long: the test waits for
 * the loop to be asleep on a promise, not on wall-clock time.
 */
class WatchedClock implements Clock {
  readonly manual = new ManualClock('2030-01-01T00:00:00Z');
  readonly waits: number[] = [];
  #asleep: (() => void) | undefined;

  nowMs(): number {
    return this.manual.nowMs();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.waits.push(ms);
    const slept = this.manual.sleep(ms, signal);
    this.#asleep?.();
    this.#asleep = undefined;
    return slept;
  }

  /** Resolves at the next sleep's start. */
  asleep(): Promise<void> {
    return new Promise((resolve) => (this.#asleep = resolve));
  }
}

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function capturingLog() {
  const lines: { level: string; fields: object; msg: string }[] = [];
  const log: Log = {
    info: (fields, msg) => void lines.push({ level: 'info', fields, msg }),
    warn: (fields, msg) => void lines.push({ level: 'warn', fields, msg }),
    error: (fields, msg) => void lines.push({ level: 'error', fields, msg }),
  };
  return { lines, log };
}

function task(tick: (signal: AbortSignal) => Promise<void> | void, extra: { jitter?: number; random?: () => number } = {}) {
  const clock = new WatchedClock();
  const { lines, log } = capturingLog();
  const periodic = new PeriodicTask(tick, { intervalMs: MINUTE, clock, log, failureMessage: 'the test task failed', ...extra });
  return { clock, lines, periodic };
}

describe('PeriodicTask', () => {
  it('ticks at start, then once each time the clock passes the interval', async () => {
    let ticks = 0;
    const { clock, periodic } = task(() => void ticks++);
    let asleep = clock.asleep();
    periodic.start();
    await asleep;
    expect(ticks).toBe(1);
    expect(clock.waits).toEqual([MINUTE]);

    // Short of the interval: nothing.
    clock.manual.advance(MINUTE - 1);
    await Promise.resolve();
    expect(ticks).toBe(1);

    asleep = clock.asleep();
    clock.manual.advance(1);
    await asleep;
    expect(ticks).toBe(2);
    expect(clock.waits).toEqual([MINUTE, MINUTE]);

    await periodic.stop();
    expect(clock.manual.sleepers).toBe(0);
  });

  it('starts one loop however often start() is called', async () => {
    let ticks = 0;
    const { clock, periodic } = task(() => void ticks++);
    const asleep = clock.asleep();
    periodic.start();
    periodic.start();
    await asleep;
    expect(ticks).toBe(1);
    expect(clock.manual.sleepers).toBe(1);
    await periodic.stop();
  });

  it('logs a tick that throws with its message only, and the next tick still runs', async () => {
    let ticks = 0;
    const { clock, lines, periodic } = task(async () => {
      ticks++;
      if (ticks === 1) throw Object.assign(new Error('the table is locked'), { query: 'secret values' });
      if (ticks === 2) throw 'a bare string';
    });
    let asleep = clock.asleep();
    periodic.start();
    await asleep;
    expect(lines).toEqual([{ level: 'error', fields: { err: { message: 'the table is locked' } }, msg: 'the test task failed' }]);

    asleep = clock.asleep();
    clock.manual.advance(MINUTE);
    await asleep;
    expect(lines[1]).toEqual({ level: 'error', fields: { err: { message: 'a bare string' } }, msg: 'the test task failed' });

    asleep = clock.asleep();
    clock.manual.advance(MINUTE);
    await asleep;
    expect(ticks).toBe(3);
    expect(lines).toHaveLength(2);
    await periodic.stop();
  });

  it('stop() aborts the tick in progress, waits for it to return, and no tick runs after', async () => {
    const started = deferred();
    const release = deferred();
    let ticks = 0;
    let abortedDuringTick = false;
    const { clock, periodic } = task(async (signal) => {
      ticks++;
      started.resolve();
      await release.promise;
      abortedDuringTick = signal.aborted;
    });
    periodic.start();
    await started.promise;

    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    expect(periodic.signal.aborted).toBe(true);
    // Let every pending callback run: stop() is still waiting on the tick.
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);

    release.resolve();
    await stopping;
    expect(abortedDuringTick).toBe(true);
    // It went to no sleep after the tick, and moving the clock starts nothing.
    expect(clock.waits).toEqual([]);
    clock.manual.advance(10 * MINUTE);
    await new Promise((r) => setImmediate(r));
    expect(ticks).toBe(1);
  });

  it('stop() ends the wait between ticks at once', async () => {
    let ticks = 0;
    const { clock, periodic } = task(() => void ticks++);
    const asleep = clock.asleep();
    periodic.start();
    await asleep;
    await periodic.stop();
    expect(clock.manual.sleepers).toBe(0);
    clock.manual.advance(MINUTE);
    await new Promise((r) => setImmediate(r));
    expect(ticks).toBe(1);
  });

  it('runs nothing when stopped before it starts, or started again after stopping', async () => {
    let ticks = 0;
    const { clock, periodic } = task(() => void ticks++);
    await periodic.stop();
    periodic.start();
    await periodic.stop();
    await new Promise((r) => setImmediate(r));
    expect(ticks).toBe(0);
    expect(clock.waits).toEqual([]);
  });

  it('waits exactly the interval by default, without drawing a random number', async () => {
    const { clock, periodic } = task(() => undefined, {
      random: () => {
        throw new Error('no jitter was asked for');
      },
    });
    const asleep = clock.asleep();
    periodic.start();
    await asleep;
    expect(clock.waits).toEqual([MINUTE]);
    await periodic.stop();
  });

  it('spreads each wait within the interval ± the jitter, drawn from the given random source', async () => {
    const draws = [0, 0.5, 0.999_999];
    const { clock, periodic } = task(() => undefined, { jitter: 0.2, random: () => draws.shift()! });
    let asleep = clock.asleep();
    periodic.start();
    await asleep;
    for (const wait of [48_000, 60_000]) {
      expect(clock.waits.at(-1)).toBe(wait);
      asleep = clock.asleep();
      clock.manual.advance(wait);
      await asleep;
    }
    expect(clock.waits).toEqual([48_000, 60_000, 72_000]);
    await periodic.stop();
  });

  it('keeps every jittered wait within its bounds', () => {
    for (const jitter of [0, 0.1, 0.5, 1]) {
      for (let i = 0; i <= 1000; i++) {
        const r = Math.min(i / 1000, 0.999_999_999);
        const ms = jitteredMs(MINUTE, jitter, () => r);
        expect(ms).toBeGreaterThanOrEqual(Math.floor(MINUTE * (1 - jitter)));
        expect(ms).toBeLessThanOrEqual(Math.ceil(MINUTE * (1 + jitter)));
        expect(Number.isInteger(ms)).toBe(true);
      }
    }
  });

  it('refuses a jitter outside 0 to 1', () => {
    const clock = new ManualClock(0);
    const { log } = capturingLog();
    for (const jitter of [-0.1, 1.5, Number.NaN]) {
      expect(() => new PeriodicTask(() => undefined, { intervalMs: MINUTE, clock, log, failureMessage: 'x', jitter })).toThrow(RangeError);
    }
  });
});
