import type { Clock } from '../lib/clock.js';

/** What a slot loop runs: the job worker's runs, the webhook sender's deliveries. */
export interface SlotSource<T> {
  /**
   * Takes up to `max` items to start now (fewer, or none, when no more are due). Reports its own
   * failures and answers none: the loop then waits for the next wake-up or poll.
   */
  claim(max: number): Promise<readonly T[]>;
  /** Runs one item in a slot; a rejection goes to `failed`. */
  run(item: T, hardStop: AbortSignal): Promise<void>;
  failed(item: T, err: unknown): void;
  /** Items one claim may take (default: as many as there are free slots). */
  readonly batch?: number;
  /** Asked before claiming into free slots; false claims nothing this pass (a full disk). */
  mayClaim?(): Promise<boolean>;
  /** Runs at the first pass and then at most once per poll interval, after that pass has claimed. */
  maintain?(): Promise<void>;
}

export interface SlotLoopOptions {
  /** Items in flight at once. */
  readonly concurrency: number;
  /** The backstop: how often the loop looks for work nobody signalled. */
  readonly pollMs: number;
  readonly clock: Clock;
}

export interface SlotLoopStop {
  /** Claims once more after the loop has ended (the webhook sender sends what the last runs wrote). */
  readonly finalFill?: boolean;
  /**
   * How long items in flight may go on after the loop ends; then `hardStop` aborts and the loop
   * waits for them to give up. Absent: waits for them however long they take.
   */
  readonly graceMs?: number;
}

/** How a stop went: items in flight when claiming stopped, and those still going when the grace ran out. */
export interface SlotLoopStopped {
  readonly inFlight: number;
  readonly cut: number;
}

/**
 * The one slot-and-poll loop of the job worker and the webhook sender: while slots are free it
 * claims and starts items; between passes it waits for a wake-up (a signal from the store's
 * events, or a slot freed) or the slow poll, which is the backstop for work from other processes
 * and for due retries. stop() ends claiming, then drains with an optional grace period.
 */
export class SlotLoop<T> {
  readonly #source: SlotSource<T>;
  readonly #opts: SlotLoopOptions;
  readonly #inFlight = new Set<Promise<void>>();
  /** Aborted by stop(): no more claims, and the loop's wait ends at once. */
  readonly #stopping = new AbortController();
  /** Aborted when the grace period ends: items still going give up. */
  readonly #hardStop = new AbortController();
  #wake = new AbortController();
  #loop: Promise<void> | undefined;
  #off: (() => void) | undefined;

  constructor(source: SlotSource<T>, opts: SlotLoopOptions) {
    this.#source = source;
    this.#opts = opts;
  }

  get running(): number {
    return this.#inFlight.size;
  }

  /** Starts the loop; `subscribe` hooks wake-ups (it gets `poke` and returns how to unhook). */
  start(subscribe?: (poke: () => void) => () => void): void {
    if (this.#loop) return;
    this.#off = subscribe?.(() => this.poke());
    this.#loop = this.#run();
  }

  /** Ends the current wait: there may be work now. */
  poke(): void {
    this.#wake.abort();
  }

  /** Claims into the free slots now; returns how many items it started. */
  fill(): Promise<number> {
    return this.#fill(false);
  }

  /** Resolves once every item in flight now has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  async stop(opts: SlotLoopStop = {}): Promise<SlotLoopStopped> {
    this.#stopping.abort();
    this.#off?.();
    await this.#loop;
    if (opts.finalFill) await this.#fill(true);
    const inFlight = this.#inFlight.size;
    let cut = 0;
    if (inFlight === 0) return { inFlight, cut };
    const allDone = this.settled();
    if (opts.graceMs !== undefined) {
      const grace = new AbortController();
      void allDone.then(() => grace.abort());
      await this.#opts.clock.sleep(opts.graceMs, grace.signal).catch(() => undefined);
      cut = this.#inFlight.size;
      this.#hardStop.abort();
    }
    await allDone;
    return { inFlight, cut };
  }

  async #run(): Promise<void> {
    const { clock, pollMs } = this.#opts;
    let lastMaintenance = -Infinity;
    while (!this.#stopping.signal.aborted) {
      this.#wake = new AbortController();
      // Claims first: the wake-up that finds maintenance due is most often a job just queued, and
      // its dispatch would otherwise wait for the sweep (docs/benchmarks.md, dispatch latency).
      await this.#fill(false);
      if (this.#source.maintain && clock.nowMs() - lastMaintenance >= pollMs) {
        lastMaintenance = clock.nowMs();
        await this.#source.maintain();
      }
      const wait = AbortSignal.any([this.#wake.signal, this.#stopping.signal]);
      await clock.sleep(pollMs, wait).catch(() => undefined);
    }
  }

  /** Claims until every slot is busy or a claim comes back short. */
  async #fill(last: boolean): Promise<number> {
    const { concurrency } = this.#opts;
    let started = 0;
    let asked = false;
    while ((last || !this.#stopping.signal.aborted) && this.#inFlight.size < concurrency) {
      if (!asked && this.#source.mayClaim && !(await this.#source.mayClaim())) return 0;
      asked = true;
      const max = Math.min(concurrency - this.#inFlight.size, this.#source.batch ?? Infinity);
      const items = await this.#source.claim(max);
      for (const item of items) this.#start(item);
      started += items.length;
      if (items.length < max) break;
    }
    return started;
  }

  #start(item: T): void {
    const task: Promise<void> = this.#source
      .run(item, this.#hardStop.signal)
      .catch((err: unknown) => this.#source.failed(item, err))
      .finally(() => {
        this.#inFlight.delete(task);
        this.poke();
      });
    this.#inFlight.add(task);
  }
}
