import type { Store, StoreTx } from '../../src/store/store.js';

/** Counts the store's write transactions, and lets a test break the job insert of one. */
export function watchTransactions(store: Store, breakInsertOf?: (prompt: unknown) => boolean): { readonly count: number } {
  const original = store.transaction.bind(store);
  const seen = { count: 0 };
  (store as { transaction: Store['transaction'] }).transaction = (fn) => {
    seen.count++;
    return original((tx) => {
      if (!breakInsertOf) return fn(tx);
      const jobs: StoreTx['jobs'] = Object.create(tx.jobs) as StoreTx['jobs'];
      jobs.insertJobs = (list, now) => (list.some((j) => breakInsertOf(j.request.prompt)) ? Promise.reject(new Error('disk said no')) : tx.jobs.insertJobs(list, now));
      return fn({ ...tx, jobs });
    });
  };
  return seen;
}

