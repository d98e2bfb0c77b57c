import type { Clock } from './clock.js';
import type { Log } from './log.js';

/** One run of the task. It should stop early (at its next batch) once `signal` aborts. */
export type Tick = (signal: AbortSignal) => Promise<void> | void;

export interface PeriodicTaskOptions {
  /** Time from the end of one tick to the start of the next; the first runs at start(). */
  readonly intervalMs: number;
  /** Sleeps go through it, so a ManualClock moved past the interval is what starts the next tick. */
  readonly clock: Clock;
  /** Where a tick that throws is reported. */
  readonly log: Log;
  /** The message of that report: the caller's own words, which operators and alerts search for. */
  readonly failureMessage: string;
  /**
   * Each wait is drawn from the interval ± this fraction of it (0 to 1), so processes sharing one
   * database that start together drift apart instead of sweeping in lockstep. 0 by default: a
   * wait of exactly the interval, so a test that moves a ManualClock by the interval sees the next
   * tick, and no caller's schedule changes unless it asks for the spread.
   */
  readonly jitter?: number;
  /** The random source of the jitter, [0, 1) like Math.random (its default); tests fix it. */
  readonly random?: () => number;
}

/** The wait before the next tick: `intervalMs` moved by up to ±`jitter` of itself, in whole ms. */
export function jitteredMs(intervalMs: number, jitter: number, random: () => number): number {
  if (jitter === 0) return intervalMs;
  return Math.max(0, Math.round(intervalMs * (1 + jitter * (2 * random() - 1))));
}

/**
 * A tick now, then one every interval after the last ended, until stop(): the loop of the
 * janitor-style sweeps. A tick that throws is logged and the next still comes, so one bad pass
 * (a lost connection, a locked table) never ends the upkeep of a long-running process.
 */
export class PeriodicTask {
  readonly #tick: Tick;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #failureMessage: string;
  readonly #intervalMs: number;
  readonly #jitter: number;
  readonly #random: () => number;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(tick: Tick, opts: PeriodicTaskOptions) {
    const jitter = opts.jitter ?? 0;
    if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be between 0 and 1, not ${jitter}`);
    this.#tick = tick;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#failureMessage = opts.failureMessage;
    this.#intervalMs = opts.intervalMs;
    this.#jitter = jitter;
    this.#random = opts.random ?? Math.random;
  }

  /** Aborted once stop() is called: the owner's own passes outside the loop can stop on it too. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Starts the loop; again, or after stop(), it does nothing (a stopped task stays stopped). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Ends the wait at once and resolves when a tick in progress has returned; no tick runs after. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#tick(signal);
      } catch (err) {
        // The message only: a stack or the whole error may carry a URL, a key or a query's values.
        const message = err instanceof Error ? err.message : String(err);
        this.#log.error({ err: { message } }, this.#failureMessage);
      }
      if (signal.aborted) break;
      // Rejects when stop() aborts the wait; the loop's condition then ends it.
      await this.#clock.sleep(jitteredMs(this.#intervalMs, this.#jitter, this.#random), signal).catch(() => undefined);
    }
  }
}
