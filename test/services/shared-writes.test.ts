import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { watchTransactions } from '../helpers/transactions.js';
import type { ClaimedJob } from '../../src/services/jobs/job-runs.js';

const MODEL = 'image/vendor-b/model-b-1';

describe.each(backends)('the moves of runs in shared transactions: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('ends of many jobs share transactions; an end whose job was cancelled meanwhile is undone alone and the others are each billed once', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 100, maxBackloggedJobs: 0 } });
    const n = 12;
    for (let i = 0; i < n; i++) expect((await generate(t, MODEL, { prompt: `p${i}` })).statusCode).toBe(200);
    const runs = t.services.runs;
    const claimed: ClaimedJob[] = [];
    for (let i = 0; i < n; i++) claimed.push((await runs.claim())!);
    const seen = watchTransactions(t.store);
    await Promise.all(claimed.map((job) => runs.advance(job, 'scheduled', 'processing')));
    await Promise.all(claimed.map((job) => runs.advance(job, 'processing', 'sampling')));
    const lost = claimed[5]!;
    expect((await t.app.inject({ method: 'POST', url: `/jobs/${lost.id}/cancel`, headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);
    const before = seen.count;
    const ended = await Promise.all(claimed.map((job) => runs.complete(job, 'sampling', { urls: [] })));
    // Fewer transactions than writes: 2n moves and n ends, plus the cancel's own.
    expect(seen.count).toBeLessThan(3 * n);
    expect(seen.count - before).toBeLessThan(n);
    expect(ended.map((e) => (e.kind === 'ended' ? e.job.status : e))).toEqual(claimed.map((job) => (job.id === lost.id ? { kind: 'lost', why: 'cancelled', outputsGo: true } : 'completed')));
    expect((await t.store.queue.findJob(lost.id))?.status).toBe('cancelled');
    const ledger = await t.store.billing.listEntries(t.workspaceId);
    expect(ledger.filter((e) => e.kind === 'charge')).toHaveLength(n - 1);
    expect(ledger.filter((e) => e.kind === 'release').map((e) => e.jobId)).toEqual([lost.id]);
    await expectLedgerConsistent(t.store, t.workspaceId);
    expect(await t.store.queue.admissionCounts(t.workspaceId)).toEqual({ active: 0, backlogged: 0 });
  });
});
