/**
 * At most `permits` holders at once, and at most `queue` more waiting in arrival order. A caller
 * beyond both is refused at once (`acquire` resolves undefined) rather than queued without bound:
 * a burst of expensive work then answers "busy" instead of growing memory and latency.
 */
export class Semaphore {
  readonly #permits: number;
  readonly #queue: number;
  #held = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(permits: number, queue: number) {
    this.#permits = Math.max(1, permits);
    this.#queue = Math.max(0, queue);
  }

  /** A release function once a permit is free; undefined when the queue is full. Rejects if `signal` aborts while waiting. */
  async acquire(signal?: AbortSignal): Promise<(() => void) | undefined> {
    if (this.#held < this.#permits) {
      this.#held++;
      return this.#release();
    }
    if (this.#waiting.length >= this.#queue) return undefined;
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        const i = this.#waiting.indexOf(turn);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal!.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', leave, { once: true });
      this.#waiting.push(turn);
    });
    // The releasing holder's permit was handed over as it was: `held` already counts it.
    return this.#release();
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The permit passes straight to the next in line, so no newcomer can take it meanwhile.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held--;
    };
  }
}
