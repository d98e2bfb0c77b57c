import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

/** `NewClaim.queuedBefore`: sandbox mode's dwell in `queued` (docs/sandbox.md). */
describe.each(backends)('claims with queuedBefore: $name', (backend) => {
  const f = useStoreFixture(backend);
  const insert = (at: number) =>
    f.store.jobs.insertJob(
      { id: newId(), workspaceId: f.ws.id, apiUserId: f.ws.apiUserId, type: 'image/vendor-b/model-b-1', status: 'queued', request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' },
      at,
    );
  const claim = (now: number, queuedBefore?: number) =>
    f.store.queue.claim({ leaseId: newId(), leaseExpiresAt: now + 30 * SEC, outputKey: newId(), now, ...(queuedBefore === undefined ? {} : { queuedBefore }) });

  it('takes only a job that has been queued since at most that instant, counting from its last status change', async () => {
    const job = await insert(T0);
    expect(await claim(T0 + SEC, T0 - 1)).toBeUndefined();
    const first = (await claim(T0 + SEC, T0))!;
    expect(first.id).toBe(job.id);
    // Handed back at T0 + 2 s: queued again from then on.
    await f.store.queue.move('requeue', { id: job.id, leaseId: first.leaseId!, now: T0 + 2 * SEC });
    expect(await claim(T0 + 3 * SEC, T0 + 2 * SEC - 1)).toBeUndefined();
    expect((await claim(T0 + 4 * SEC, T0 + 2 * SEC))?.id).toBe(job.id);
  });
});
