import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { watchTransactions } from '../helpers/transactions.js';

const MODEL = 'image/vendor-b/model-b-1';

describe.each(backends)('creates admitted in shared transactions (group commit): $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('admits parallel creates in fewer transactions than creates, each answered with its own stored job', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 1000, maxBackloggedJobs: 0 } });
    const seen = watchTransactions(t.store);
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => generate(t, MODEL, { prompt: `p${i}` })));
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 200));
    expect(seen.count).toBeLessThan(60);
    const ids = responses.map((r) => (r.json() as { job_id: string }).job_id);
    expect(new Set(ids).size).toBe(60);
    const stored = await Promise.all(ids.map((id) => t.store.queue.findJob(id)));
    stored.forEach((job, i) => expect(job?.request.prompt).toBe(`p${i}`));
    // The API user's creation clock gives every job its own time, in the order of the batch.
    expect(new Set(stored.map((j) => j!.createdAt)).size).toBe(60);
    expect((await expectLedgerConsistent(t.store, t.workspaceId)).held).toBeGreaterThan(0);
    expect(await t.store.queue.admissionCounts(t.workspaceId)).toEqual({ active: 60, backlogged: 0 });
  });

  it('a lone create is one transaction', async () => {
    t = await createTestApp({ backend });
    const seen = watchTransactions(t.store);
    expect((await generate(t, MODEL, { prompt: 'alone' })).statusCode).toBe(200);
    expect(seen.count).toBe(1);
  });

  it('refuses a request of a batch alone: the full workspace answers 429 while another workspace in the same batch is admitted', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 } });
    const other = await t.newWorkspace('other');
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => generate(t, MODEL, { prompt: `p${i}` }, {}, i % 2 === 0 ? t.token : other.token)),
    );
    const codes = responses.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(2);
    expect(codes.filter((c) => c === 429)).toHaveLength(4);
    expect((responses.find((r) => r.statusCode === 429)!.json() as { error: string }).error).toMatch(/too many jobs/);
    expect(await t.store.queue.admissionCounts(t.workspaceId)).toEqual({ active: 1, backlogged: 0 });
    expect(await t.store.queue.admissionCounts(other.workspaceId)).toEqual({ active: 1, backlogged: 0 });
  });

  it('a batch whose write fails is run again request by request: only the request that breaks it fails, nothing of it is stored or held', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 1000, maxBackloggedJobs: 0 } });
    watchTransactions(t.store, (prompt) => prompt === 'breaks');
    const prompts = ['a', 'b', 'breaks', 'c', 'd'];
    // Raw inject: a 500 is no declared answer of the route, which generate() would refuse.
    const post = (prompt: string) =>
      t.app.inject({ method: 'POST', url: `/generate/${MODEL}`, headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, payload: { prompt } });
    const responses = await Promise.all(prompts.map(post));
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 500, 200, 200]);
    expect(responses[2]!.json()).toEqual({ error: expect.any(String) });
    expect(responses[2]!.body).not.toContain('disk said no');
    expect(await t.store.queue.admissionCounts(t.workspaceId)).toEqual({ active: 4, backlogged: 0 });
    const ledger = await t.store.billing.listEntries(t.workspaceId);
    expect(ledger.filter((e) => e.kind === 'hold')).toHaveLength(4);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });
});
