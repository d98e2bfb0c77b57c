/** One item's own answer out of a batch: a value, or the error that refused it alone. */
export type Outcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

export interface GroupCommitOptions {
  /** Items one batch takes at most; the rest go in the next. */
  readonly maxBatch: number;
  /**
   * How long an idle batcher waits for company before it starts a batch. 0: only what arrives in
   * the same turn of the event loop; items that arrive while a batch runs go in the next.
   */
  readonly windowMs: number;
  /**
   * Batches running at once (default 4). A second starts only when items have waited `stallMs`
   * behind a batch still running: a slow transaction (a lock wait) does not hold up everyone.
   */
  readonly maxInFlight?: number;
  /** How long waiting items let a running batch finish before they start their own (default 20 ms). */
  readonly stallMs?: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: items submitted together are handed to `run` as one batch (one transaction), and
 * each submitter is answered only when `run` returns, so after the commit. What arrives while a
 * batch runs waits and goes in the next, so the batch grows with the load and a lone item waits for
 * nothing but its own turn of the event loop. Items that have waited `stallMs` behind a batch still
 * running start another beside it (up to `maxInFlight`), so one slow transaction delays only its own.
 *
 * `run` answers each item on its own (`Outcome`): an item it refuses fails alone. When `run` throws
 * instead (the batch as a whole failed: a lost connection, a constraint nobody decided on), every
 * item of a batch of several is run again alone, so that the item that caused it fails alone and
 * the others go on; a batch of one rejects with the error.
 */
export class GroupCommit<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly Outcome<O>[]>;
  readonly #opts: Required<GroupCommitOptions>;
  readonly #waiting: Waiting<I, O>[] = [];
  #inFlight = 0;
  #timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | undefined;

  constructor(run: (items: readonly I[]) => Promise<readonly Outcome<O>[]>, opts: GroupCommitOptions) {
    this.#run = run;
    this.#opts = {
      maxBatch: Math.max(1, opts.maxBatch),
      windowMs: Math.max(0, opts.windowMs),
      maxInFlight: Math.max(1, opts.maxInFlight ?? 4),
      stallMs: Math.max(0, opts.stallMs ?? 20),
    };
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Arranges the next batch start: soon when nothing runs, after `stallMs` beside a running one. */
  #schedule(): void {
    if (this.#timer !== undefined || this.#waiting.length === 0 || this.#inFlight >= this.#opts.maxInFlight) return;
    const start = () => {
      this.#timer = undefined;
      this.#start();
    };
    if (this.#inFlight > 0) this.#timer = setTimeout(start, this.#opts.stallMs);
    else if (this.#opts.windowMs > 0) this.#timer = setTimeout(start, this.#opts.windowMs);
    else this.#timer = setImmediate(start);
  }

  #start(): void {
    if (this.#waiting.length === 0 || this.#inFlight >= this.#opts.maxInFlight) return;
    const batch = this.#waiting.splice(0, this.#opts.maxBatch);
    this.#inFlight++;
    void this.#runBatch(batch).finally(() => {
      this.#inFlight--;
      // What waited behind it goes now, as one batch; a stall timer still pending gives way to it.
      if (this.#timer !== undefined && this.#inFlight === 0) {
        clearTimeout(this.#timer as ReturnType<typeof setTimeout>);
        this.#timer = undefined;
      }
      if (this.#inFlight === 0) this.#start();
      this.#schedule();
    });
    this.#schedule();
  }

  async #runBatch(batch: readonly Waiting<I, O>[]): Promise<void> {
    let outcomes: readonly Outcome<O>[];
    try {
      outcomes = await this.#run(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length === 1) batch[0]!.reject(err);
      else for (const w of batch) await this.#runBatch([w]);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i];
      if (!o) w.reject(new Error('group commit: the batch gave no answer for an item'));
      else if (o.ok) w.resolve(o.value);
      else w.reject(o.error);
    });
  }
}

/**
 * One GroupCommit per key: items of one key share batches, items of different keys never do (their
 * batches run side by side). A key's batcher lives while the process does; keys are few (workspaces).
 */
export class KeyedGroupCommit<I, O> {
  readonly #make: () => GroupCommit<I, O>;
  readonly #byKey = new Map<string, GroupCommit<I, O>>();

  constructor(run: (items: readonly I[]) => Promise<readonly Outcome<O>[]>, opts: GroupCommitOptions) {
    this.#make = () => new GroupCommit(run, opts);
  }

  submit(key: string, item: I): Promise<O> {
    let batcher = this.#byKey.get(key);
    if (!batcher) {
      batcher = this.#make();
      this.#byKey.set(key, batcher);
    }
    return batcher.submit(item);
  }
}
