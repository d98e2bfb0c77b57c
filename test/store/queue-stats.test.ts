import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { JobStatus } from '../../src/domain/states.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

/** `Store.stats.depthByStatus`: the metrics' queue depth, one grouped count on both backends. */
describe.each(backends)('queue depth by status: $name', (backend) => {
  const f = useStoreFixture(backend);
  const insert = (status: JobStatus, at: number) =>
    f.store.jobs.insertJob(
      { id: newId(), workspaceId: f.ws.id, apiUserId: f.ws.apiUserId, type: 'image/vendor-b/model-b-1', status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' },
      at,
    );

  it('counts the jobs of every status that has not ended, and leaves ended ones out', async () => {
    expect(await f.store.stats.depthByStatus()).toEqual(new Map());
    for (let i = 0; i < 3; i++) await insert('queued', T0 + i);
    await insert('backlogged', T0 + 5);
    const claimed = (await f.store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 30 * SEC, outputKey: newId(), now: T0 + SEC }))!;
    expect(await f.store.stats.depthByStatus()).toEqual(new Map<JobStatus, number>([['queued', 2], ['backlogged', 1], ['scheduled', 1]]));
    await f.store.queue.move('fail', { id: claimed.id, leaseId: claimed.leaseId!, patch: { error: { code: 'engine_failed' }, completedAt: T0 + 2 * SEC }, now: T0 + 2 * SEC });
    expect(await f.store.stats.depthByStatus()).toEqual(new Map<JobStatus, number>([['queued', 2], ['backlogged', 1]]));
  });
});
