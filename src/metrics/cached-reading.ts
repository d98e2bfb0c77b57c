import type { Clock } from '../lib/clock.js';

/**
 * A database reading shared by every scrape within `maxAgeMs`: scrapers (several Prometheus
 * servers, a curl loop) cost at most one query per interval, and concurrent scrapes share the
 * one in flight. A failed read answers undefined and is retried by the next scrape.
 */
export class CachedReading<T> {
  readonly #read: () => Promise<T>;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;
  #last: { readonly at: number; readonly value: Promise<T | undefined> } | undefined;

  constructor(read: () => Promise<T>, maxAgeMs: number, clock: Clock) {
    this.#read = read;
    this.#maxAgeMs = maxAgeMs;
    this.#clock = clock;
  }

  read(): Promise<T | undefined> {
    const now = this.#clock.nowMs();
    if (this.#last && now - this.#last.at < this.#maxAgeMs) return this.#last.value;
    const value = this.#read().catch(() => {
      // Not cached: the next scrape asks the database again.
      if (this.#last?.value === value) this.#last = undefined;
      return undefined;
    });
    this.#last = { at: now, value };
    return value;
  }
}
