/** One item's own answer out of a batch: a value, or the error that refused it alone. */
export type Outcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

export interface GroupCommitOptions {
  /** Items one batch takes at most; the rest go in the next. */
  readonly maxBatch: number;
  /**
   * How long an idle batcher waits for company before it starts a batch. 0: only what arrives in
   * the same turn of the event loop; items that arrive while a batch runs always go in the next.
   */
  readonly windowMs: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: items submitted together are handed to `run` as one batch (one transaction), and
 * each submitter is answered only when `run` returns, so after the commit. One batch runs at a
 * time; what arrives meanwhile waits and goes in the next, so the batch grows with the load and a
 * lone item waits for nothing but its own turn of the event loop.
 *
 * `run` answers each item on its own (`Outcome`): an item it refuses fails alone. When `run` throws
 * instead (the batch as a whole failed: a lost connection, a constraint nobody decided on), every
 * item of a batch of several is run again alone, so that the item that caused it fails alone and
 * the others go on; a batch of one rejects with the error.
 */
export class GroupCommit<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly Outcome<O>[]>;
  readonly #opts: GroupCommitOptions;
  readonly #waiting: Waiting<I, O>[] = [];
  #busy = false;

  constructor(run: (items: readonly I[]) => Promise<readonly Outcome<O>[]>, opts: GroupCommitOptions) {
    this.#run = run;
    this.#opts = { maxBatch: Math.max(1, opts.maxBatch), windowMs: Math.max(0, opts.windowMs) };
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (this.#busy) return;
      this.#busy = true;
      const start = () => void this.#drain();
      if (this.#opts.windowMs > 0) setTimeout(start, this.#opts.windowMs);
      else setImmediate(start);
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#opts.maxBatch);
      await this.#runBatch(batch);
    }
    this.#busy = false;
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
