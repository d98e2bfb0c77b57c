import { setTimeout as delay } from 'node:timers/promises';

/**
 * The only source of time in domain code, so tests can stand on either side of a date, and of a
 * timeout: waits go through the clock too, and a ManualClock ends them only when moved past.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  nowMs: () => Date.now(),
  sleep: async (ms: number, signal?: AbortSignal) => {
    try {
      await delay(Math.max(0, ms), undefined, signal ? { signal } : undefined);
    } catch (err) {
      // timers/promises rejects with its own AbortError; callers expect the signal's reason.
      throw signal?.aborted ? signal.reason : err;
    }
  },
});

interface Sleeper {
  readonly until: number;
  readonly resolve: () => void;
}

/** A clock that moves only when told to; for tests and simulations. */
export class ManualClock implements Clock {
  #ms: number;
  readonly #sleepers = new Set<Sleeper>();

  constructor(start: Date | string | number) {
    this.#ms = new Date(start).getTime();
  }

  nowMs(): number {
    return this.#ms;
  }

  set(to: Date | string | number): void {
    this.#ms = new Date(to).getTime();
    this.#wake();
  }

  advance(ms: number): void {
    this.#ms += ms;
    this.#wake();
  }

  /** How many sleeps are waiting for the clock to move. */
  get sleepers(): number {
    return this.#sleepers.size;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#sleepers.delete(sleeper);
        reject(signal!.reason);
      };
      const sleeper: Sleeper = {
        until: this.#ms + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#sleepers.add(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #wake(): void {
    for (const s of this.#sleepers) {
      if (s.until <= this.#ms) {
        this.#sleepers.delete(s);
        s.resolve();
      }
    }
  }
}
