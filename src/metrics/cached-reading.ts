import type { Clock } from '../lib/clock.js';

/** How long a scrape waits for a database reading before leaving its series out. */
export const READING_TIMEOUT_MS = 2000;

/**
 * A database reading shared by every scrape within `maxAgeMs`: scrapers (several Prometheus
 * servers, a curl loop) cost at most one query per interval, and concurrent scrapes share the
 * one in flight. A failed read answers undefined and is retried by the next scrape. A read that
 * hangs (the database stalled) answers undefined after `timeoutMs`, so the scrape still answers
 * without its series; no other read starts while it is pending, so hung reads do not pile up.
 */
export class CachedReading<T> {
  readonly #read: () => Promise<T>;
  readonly #maxAgeMs: number;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  #last: { readonly at: number; readonly value: T } | undefined;
  #pending: Promise<T | undefined> | undefined;

  constructor(read: () => Promise<T>, maxAgeMs: number, clock: Clock, timeoutMs = READING_TIMEOUT_MS) {
    this.#read = read;
    this.#maxAgeMs = maxAgeMs;
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  read(): Promise<T | undefined> {
    const now = this.#clock.nowMs();
    if (this.#last && now - this.#last.at < this.#maxAgeMs) return Promise.resolve(this.#last.value);
    this.#pending ??= this.#read()
      .then(
        (value) => {
          // Its age counts from when it landed: a slow read is not stale on arrival.
          this.#last = { at: this.#clock.nowMs(), value };
          return value;
        },
        // Not cached: the next scrape asks the database again.
        () => undefined,
      )
      .finally(() => {
        this.#pending = undefined;
      });
    return withTimeout(this.#pending, this.#timeoutMs);
  }
}

/** `p`, or undefined once `ms` have passed (wall time: it bounds I/O, not a domain duration). */
function withTimeout<T>(p: Promise<T | undefined>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
