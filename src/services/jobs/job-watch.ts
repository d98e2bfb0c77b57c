import type { Clock } from '../../lib/clock.js';
import type { JobSignals } from './job-signals.js';

/** One waiter's subscription to its job's `changed` events. */
export class Watch {
  #changed = true;
  #wake: (() => void) | undefined;
  readonly #off: () => void;
  readonly #clock: Clock;

  constructor(signals: JobSignals, jobId: string, clock: Clock) {
    this.#clock = clock;
    this.#off = signals.onChanged(jobId, () => {
      this.#changed = true;
      this.#wake?.();
    });
  }

  /** The job is about to be read: changes from now on wake the next wait. */
  clear(): void {
    this.#changed = false;
  }

  /** Resolves at a change since `clear` (at once if one came), after `ms`, or when `signal` aborts. */
  async next(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#changed || signal.aborted) return;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.#wake = onAbort;
    try {
      await this.#clock.sleep(ms, stop.signal);
    } catch {
      // Woken by a change or the caller's abort.
    } finally {
      this.#wake = undefined;
      signal.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.#off();
  }
}
