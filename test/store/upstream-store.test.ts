import { beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

describe.each(backends)('upstream store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  beforeEach(() => {
    store = f.store;
  });

  const claimed = async () => {
    const job = await store.jobs.insertJob(
      { id: newId(), workspaceId: f.ws.id, apiUserId: f.ws.apiUserId, type: 'image/vendor-b/model-b-1', status: 'queued', request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'o@ws.test' },
      T0,
    );
    const leaseId = newId();
    const c = await store.queue.claim({ leaseId, leaseExpiresAt: T0 + 30 * SEC, outputKey: newId(), now: T0 });
    expect(c?.id).toBe(job.id);
    return { id: job.id, leaseId };
  };

  it("stores an engine's record of its work elsewhere while the run holds the lease, and replaces it on the next save", async () => {
    const { id, leaseId } = await claimed();
    const rec = { jobId: id, engine: 'provider:rep', id: 'p-1', state: { status: 'starting', urls: { get: 'x' } }, updatedAt: T0 };
    expect(await store.upstreams.save(rec, leaseId)).toBe(true);
    expect(await store.upstreams.find(id)).toEqual(rec);
    const next = { ...rec, state: { status: 'succeeded', usage: { predict_time: 2.5 } }, updatedAt: T0 + SEC };
    expect(await store.upstreams.save(next, leaseId)).toBe(true);
    expect(await store.upstreams.find(id)).toEqual(next);
  });

  it('writes nothing for a run that no longer holds the lease', async () => {
    const { id } = await claimed();
    expect(await store.upstreams.save({ jobId: id, engine: 'provider:rep', id: 'p-1', state: {}, updatedAt: T0 }, newId())).toBe(false);
    expect(await store.upstreams.find(id)).toBeUndefined();
  });

  it('goes with its job', async () => {
    const { id, leaseId } = await claimed();
    await store.upstreams.save({ jobId: id, engine: 'provider:rep', id: 'p-1', state: {}, updatedAt: T0 }, leaseId);
    expect(await store.jobs.deleteJob(f.ws.apiUserId, id)).toBe(true);
    expect(await store.upstreams.find(id)).toBeUndefined();
  });
});
