import { beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

describe.each(backends)('webhook outbox store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: { id: string; apiUserId: string };
  beforeEach(() => {
    store = f.store;
    ws = f.ws;
  });

  const enqueue = (jobId = newId(), now = T0) =>
    store.webhooks.enqueue({ id: `msg_${newId()}`, jobId, workspaceId: ws.id, apiUserId: ws.apiUserId, url: 'https://hooks.example.com/x', payload: { job_id: jobId, status: 'completed' }, now });
  const attempt = (n: number, nextRetryAt: number | null) => ({ attempt: n, attemptedAt: T0, statusCode: 500, error: null, durationMs: 3, nextRetryAt });

  it('leases a due delivery to one sender until the lease runs out', async () => {
    await enqueue();
    const [d] = await store.webhooks.claimDue(T0, T0 + 60 * SEC, 10);
    expect(d).toMatchObject({ state: 'pending', attempts: 0, payload: { status: 'completed' } });
    expect(await store.webhooks.claimDue(T0 + SEC, T0 + 61 * SEC, 10)).toEqual([]);
    // The sender died: after the lease another sender takes it.
    const [again] = await store.webhooks.claimDue(T0 + 60 * SEC, T0 + 120 * SEC, 10);
    expect(again?.id).toBe(d!.id);
    // The first sender's late result is not recorded; the current holder's is.
    expect(await store.webhooks.recordAttempt({ deliveryId: d!.id, leaseUntil: T0 + 60 * SEC, attempt: attempt(1, null), state: 'delivered' })).toBe(false);
    expect(await store.webhooks.recordAttempt({ deliveryId: d!.id, leaseUntil: T0 + 120 * SEC, attempt: attempt(1, T0 + 200 * SEC), state: 'pending' })).toBe(true);
    expect(await store.webhooks.claimDue(T0 + 199 * SEC, T0 + 300 * SEC, 10)).toEqual([]);
    expect(await store.webhooks.claimDue(T0 + 200 * SEC, T0 + 300 * SEC, 10)).toHaveLength(1);
  });

  it('keeps one event per job', async () => {
    const jobId = newId();
    await enqueue(jobId);
    await expect(enqueue(jobId)).rejects.toThrow();
  });

  it("lists a job's delivery with its attempts in order, and never offers a finished one again", async () => {
    const jobId = newId();
    await enqueue(jobId);
    let [d] = await store.webhooks.claimDue(T0, T0 + 60 * SEC, 1);
    await store.webhooks.recordAttempt({ deliveryId: d!.id, leaseUntil: T0 + 60 * SEC, attempt: attempt(1, T0 + 5 * SEC), state: 'pending' });
    [d] = await store.webhooks.claimDue(T0 + 5 * SEC, T0 + 65 * SEC, 1);
    await store.webhooks.recordAttempt({ deliveryId: d!.id, leaseUntil: T0 + 65 * SEC, attempt: { ...attempt(2, null), statusCode: 204 }, state: 'delivered' });
    const [listed] = await store.webhooks.listForJob(jobId);
    expect(listed).toMatchObject({ state: 'delivered', attempts: 2, nextAttemptAt: null });
    expect(listed!.attemptLog.map((a) => a.statusCode)).toEqual([500, 204]);
    expect(await store.webhooks.claimDue(T0 + 999 * SEC, T0 + 9999 * SEC, 10)).toEqual([]);
  });

  // Two SQLite handles in one process would block each other synchronously; SQLite claims are
  // serial anyway (BEGIN IMMEDIATE).
  it.skipIf(!backend.asyncLocks)('gives concurrent senders on separate connections disjoint deliveries', async () => {
    for (let i = 0; i < 20; i++) await enqueue();
    const other = await f.openAnother();
    const [a, b] = await Promise.all([store.webhooks.claimDue(T0, T0 + 60 * SEC, 12), other.webhooks.claimDue(T0, T0 + 60 * SEC, 12)]);
    const ids = [...a, ...b].map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(20);
  });

  // PostgreSQL: separate connections passing each other's locked rows (SKIP LOCKED); SQLite: one
  // handle, its claims serial under the write lock.
  it('takes each due delivery once across concurrent batch claimers, and none not yet due', async () => {
    for (let i = 0; i < 45; i++) await enqueue();
    await enqueue(newId(), T0 + 10 * SEC);
    const handles = backend.asyncLocks ? [store, ...(await Promise.all([f.openAnother(), f.openAnother(), f.openAnother()]))] : [store];
    const claimer = async (limit: number, i: number): Promise<string[]> => {
      const mine: string[] = [];
      for (;;) {
        const batch = await handles[i % handles.length]!.webhooks.claimDue(T0 + SEC, T0 + 60 * SEC, limit);
        expect(batch.length).toBeLessThanOrEqual(limit);
        if (batch.length === 0) return mine;
        mine.push(...batch.map((d) => d.id));
      }
    };
    const ids = (await Promise.all([1, 3, 4, 7, 10].map(claimer))).flat();
    expect(ids).toHaveLength(45);
    expect(new Set(ids).size).toBe(45);
  });

  it('keeps the secret until rotated; the previous one is kept with its end of validity', async () => {
    const first = await store.webhooks.secrets(ws.id, 'whsec_first', T0);
    expect(first).toEqual({ secret: 'whsec_first', previousSecret: null, previousUntil: null });
    expect(await store.webhooks.secrets(ws.id, 'whsec_other', T0)).toEqual(first);
    expect(await store.webhooks.rotate(ws.id, 'whsec_second', T0 + 86_400 * SEC, T0)).toEqual({ secret: 'whsec_second', previousSecret: 'whsec_first', previousUntil: T0 + 86_400 * SEC });
  });
});
