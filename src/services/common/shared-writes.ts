import { KeyedGroupCommit } from '../../lib/group-commit.js';
import type { Outcome } from '../../lib/group-commit.js';
import type { Store, StoreTx } from '../../store/store.js';

type Write = (tx: StoreTx) => Promise<unknown>;

/**
 * Group commit for the writes of job runs (a stage move, a job's end with its charge and webhook
 * outbox row): writes of one workspace that arrive together share one transaction, each in its own
 * savepoint, so one that throws (a lost lease: the job was cancelled or reaped) is undone alone and
 * the others commit. Each caller is answered after the commit, as if its write were alone.
 *
 * Batches are per workspace: a job's end locks its workspace row first (store/locked-workspace.ts),
 * and a transaction holding the locks of several workspaces could meet another process's in the
 * opposite order. Every write keeps its own guards (the lease, the guarded move, billing once).
 */
export class SharedWrites {
  readonly #store: Store;
  readonly #batches: KeyedGroupCommit<Write, unknown>;

  constructor(store: Store, opts: { maxBatch: number; windowMs: number } = { maxBatch: 64, windowMs: 0 }) {
    this.#store = store;
    this.#batches = new KeyedGroupCommit<Write, unknown>((writes) => this.#runAll(writes), opts);
  }

  run<T>(workspaceId: string, write: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.#batches.submit(workspaceId, write) as Promise<T>;
  }

  #runAll(writes: readonly Write[]): Promise<Outcome<unknown>[]> {
    return this.#store.transaction(async (tx) => {
      // Alone: no savepoint; its error rolls the transaction back, as a write of its own would.
      if (writes.length === 1) return [{ ok: true, value: await writes[0]!(tx) }];
      const { savepoint } = tx;
      if (!savepoint) throw new Error('the store gave a transaction without savepoints');
      const outcomes: Outcome<unknown>[] = [];
      for (const write of writes) {
        try {
          outcomes.push({ ok: true, value: await savepoint(() => write(tx)) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
  }
}
