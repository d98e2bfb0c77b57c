import type { Clock } from '../../lib/clock.js';

/**
 * Verified provider webhooks, as wake-ups for the runs polling those jobs in this process: a
 * webhook says "look now", and the run polls at once instead of at its next interval. The body is
 * never trusted beyond naming the job; the poll reads the truth from the provider. A webhook that
 * reaches another process (an API process, while a worker polls) wakes nobody: polling is the
 * backstop, so it costs only the rest of one interval.
 */
export class UpstreamNudges {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** Wakes the runs waiting on the provider's job `upstreamId`; how many there were. */
  nudge(provider: string, upstreamId: string): number {
    const wakers = this.#waiting.get(`${provider}\n${upstreamId}`);
    if (!wakers) return 0;
    for (const wake of [...wakers]) wake();
    return wakers.size;
  }

  /** Waits `ms`, or less if a nudge for the job comes; rejects with the signal's reason if it aborts. */
  async sleep(provider: string, upstreamId: string, ms: number, signal: AbortSignal, clock: Clock): Promise<void> {
    const key = `${provider}\n${upstreamId}`;
    const early = new AbortController();
    const wake = () => early.abort();
    let set = this.#waiting.get(key);
    if (!set) this.#waiting.set(key, (set = new Set()));
    set.add(wake);
    try {
      await clock.sleep(ms, AbortSignal.any([signal, early.signal]));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (!early.signal.aborted) throw err;
    } finally {
      set.delete(wake);
      if (set.size === 0) this.#waiting.delete(key);
    }
  }
}
