import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';

const MODEL = 'video/vendor-f/model-f';
const PRICE = 451_500;
const AFFORDABLE = 5;

describe.each(backends)('billing under concurrent requests: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('admits only what the balance covers, and charges exactly the completed jobs however ends and cancels interleave', async () => {
    // The balance covers five jobs and a little more; concurrency limits are out of the way.
    t = await createTestApp({ backend, balanceMicros: AFFORDABLE * PRICE + 300_000, limits: { maxConcurrentJobs: 1000, maxBackloggedJobs: 0 } });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const post = (i: number) =>
      fetch(`${base}/generate/${MODEL}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `shot ${i}` }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    const responses = await Promise.all(Array.from({ length: 300 }, (_, i) => post(i)));

    const admitted = responses.filter((r) => r.status === 200).map((r) => r.body.job_id as string);
    expect(admitted).toHaveLength(AFFORDABLE);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(300 - AFFORDABLE);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: AFFORDABLE * PRICE + 300_000, held: AFFORDABLE * PRICE });

    // Run every job; then, all at once, complete some, fail some, and race a DELETE against the
    // completion of the rest. Whichever wins, the job is billed once or not at all.
    const runs = t.services.runs;
    const claimed = [];
    for (let i = 0; i < AFFORDABLE; i++) {
      const job = (await runs.claim())!;
      await runs.advance(job, 'scheduled', 'processing');
      await runs.advance(job, 'processing', 'sampling');
      claimed.push(job);
    }
    const outcomes = await Promise.all(
      claimed.map(async (job, i) => {
        if (i % 3 === 1) return (await runs.fail(job, { code: 'engine_failed', message: 'x' })).kind === 'ended' ? 'failed' : 'lost';
        const [completed] = await Promise.all([
          runs.complete(job, 'sampling', { urls: [] }),
          i % 3 === 2 ? fetch(`${base}/jobs/${job.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${t.token}` } }) : undefined,
        ]);
        return completed.kind === 'ended' ? 'completed' : 'lost';
      }),
    );
    const completed = outcomes.filter((o) => o === 'completed').length;
    expect(completed).toBeGreaterThanOrEqual(2);
    const entries = await t.store.billing.listEntries(t.workspaceId);
    const charges = entries.filter((e) => e.kind === 'charge');
    expect(charges.reduce((s, e) => s + e.amountMicros, 0)).toBe(completed * PRICE);
    expect(new Set(charges.map((e) => e.jobId)).size).toBe(charges.length);
    expect(entries.filter((e) => e.kind === 'release')).toHaveLength(AFFORDABLE - completed);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: AFFORDABLE * PRICE + 300_000 - completed * PRICE, held: 0 });
  });
});
