import { expect } from 'vitest';
import type { ClaimedJob, JobRuns } from '../../src/services/jobs/job-runs.js';
import type { JobRecord, Store } from '../../src/store/store.js';

/**
 * The ledger's invariant, checked from the entries themselves: the running totals equal what the
 * entries add up to, every hold is settled at most once (a charge, a release, or a metered charge
 * of less than the hold and the release of the rest: together exactly the hold), and no money is owed.
 */
export async function expectLedgerConsistent(store: Store, workspaceId: string): Promise<{ balance: number; held: number }> {
  const entries = await store.billing.listEntries(workspaceId);
  const sum = (kind: string) => entries.filter((e) => e.kind === kind).reduce((s, e) => s + e.amountMicros, 0);
  const balance = sum('top_up') - sum('charge');
  const held = sum('hold') - sum('charge') - sum('release');
  expect(await store.billing.getBalance(workspaceId)).toEqual({ balanceMicros: balance, heldMicros: held });
  expect(held).toBeGreaterThanOrEqual(0);
  expect(balance).toBeGreaterThanOrEqual(held);
  for (const kind of ['charge', 'release']) {
    const settled = entries.filter((e) => e.kind === kind).map((e) => e.jobId);
    expect(new Set(settled).size).toBe(settled.length);
  }
  for (const h of entries.filter((e) => e.kind === 'hold')) {
    const ends = entries.filter((e) => e.jobId === h.jobId && (e.kind === 'charge' || e.kind === 'release'));
    if (ends.length > 0) expect(ends.reduce((s, e) => s + e.amountMicros, 0)).toBe(h.amountMicros);
    // Only a charge of less than the hold comes with a release.
    if (ends.length === 2) expect(ends.map((e) => e.kind).sort()).toEqual(['charge', 'release']);
  }
  return { balance, held };
}

/** Drives the next queued job the way a worker would, without an engine: claim, run, end. */
export async function runNextJob(
  runs: JobRuns,
  outcome: 'completed' | 'failed',
): Promise<{ job: ClaimedJob; ended: JobRecord | undefined }> {
  const job = await runs.claim();
  if (!job) throw new Error('no queued job to run');
  await runs.advance(job, 'scheduled', 'processing');
  await runs.advance(job, 'processing', 'sampling');
  const moved =
    outcome === 'completed'
      ? await runs.complete(job, 'sampling', { urls: [] })
      : await runs.fail(job, { code: 'engine_failed', message: 'scripted failure' });
  return { job, ended: moved.kind === 'ended' ? moved.job : undefined };
}
