import { beforeEach, describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import type { JobEvent, JobRecord, Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

/**
 * Migration 0015: every status a job takes is a row of job_transitions, written by the database's
 * triggers in the statement that changes it, and every move announces `changed` to this process
 * and to the others sharing the store.
 */
describe.each(backends)('job transitions and change events: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: { id: string; apiUserId: string };
  beforeEach(() => {
    store = f.store;
    ws = f.ws;
  });

  const insert = (status: JobStatus = 'queued', id = newId(), requestId: string | null = null) =>
    store.jobs.insertJob(
      { id, workspaceId: ws.id, apiUserId: ws.apiUserId, type: 'image/vendor-b/model-b-1', status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost', requestId },
      T0,
    );
  const claim = (now = T0 + SEC) => store.queue.claim({ leaseId: newId(), leaseExpiresAt: now + 30 * SEC, outputKey: newId(), now });
  const history = async (id: string, afterId = 0) => (await store.jobs.transitions(ws.apiUserId, id, afterId, 100))?.transitions;
  const statuses = async (id: string) => (await history(id))!.map((t) => t.status);

  it('writes a row for the creation and for every move, in order, at the time of each', async () => {
    const job = await insert('backlogged');
    await store.queue.move('promote', { id: job.id, now: T0 + SEC });
    const c = (await claim(T0 + 2 * SEC))!;
    await store.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 3 * SEC });
    await store.queue.move('markSampling', { id: c.id, leaseId: c.leaseId!, now: T0 + 4 * SEC });
    await store.queue.move('requeue', { id: c.id, leaseId: c.leaseId!, now: T0 + 5 * SEC });
    const again = (await claim(T0 + 6 * SEC))!;
    await store.queue.move('start', { id: c.id, leaseId: again.leaseId!, now: T0 + 7 * SEC });
    await store.queue.move('markSampling', { id: c.id, leaseId: again.leaseId!, now: T0 + 8 * SEC });
    await store.queue.move('markIntermediate', { id: c.id, leaseId: again.leaseId!, patch: { result: { urls: ['/outputs/k/p.png'] } }, now: T0 + 9 * SEC });
    await store.queue.move('complete', { id: c.id, leaseId: again.leaseId!, patch: { result: { urls: ['/outputs/k/o.png'] } }, now: T0 + 10 * SEC });
    const rows = (await history(job.id))!;
    expect(rows.map((r) => r.status)).toEqual([
      'backlogged',
      'queued',
      'scheduled',
      'processing',
      'sampling',
      'queued',
      'scheduled',
      'processing',
      'sampling',
      'intermediate-complete',
      'completed',
    ]);
    expect(rows.map((r) => r.at)).toEqual([T0, ...Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * SEC)]);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.id).toBeGreaterThan(rows[i - 1]!.id);
    // After an id: only what followed it, with the job as it is now.
    const tail = (await store.jobs.transitions(ws.apiUserId, job.id, rows[8]!.id, 100))!;
    expect(tail.transitions.map((t) => t.status)).toEqual(['intermediate-complete', 'completed']);
    expect(tail.job).toMatchObject({ id: job.id, status: 'completed', result: { urls: ['/outputs/k/o.png'] } });
    expect((await store.jobs.transitions(ws.apiUserId, job.id, rows.at(-1)!.id, 100))!.transitions).toEqual([]);
    expect((await store.jobs.transitions(ws.apiUserId, job.id, 0, 3))!.transitions.map((t) => t.status)).toEqual(['backlogged', 'queued', 'scheduled']);
  });

  it('writes the cancel and fail moves; a refused move, a lease extension and a rolled-back move write nothing', async () => {
    const a = await insert();
    await store.queue.move('cancel', { id: a.id, now: T0 + SEC });
    expect(await store.queue.move('cancel', { id: a.id, now: T0 + 2 * SEC })).toBeUndefined();
    expect(await statuses(a.id)).toEqual(['queued', 'cancelled']);
    const b = await insert();
    const c = (await claim())!;
    expect(c.id).toBe(b.id);
    expect(await store.queue.extendLease(c.id, c.leaseId!, T0 + 60 * SEC)).toBe(true);
    await expect(
      store.transaction(async (tx) => {
        await tx.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await store.queue.move('fail', { id: c.id, leaseId: c.leaseId!, patch: { error: { code: 'engine_failed' } }, now: T0 + 3 * SEC });
    expect(await statuses(b.id)).toEqual(['queued', 'scheduled', 'failed']);
  });

  it("reads only the API user's own job; a deleted job's history goes with it", async () => {
    const job = await insert();
    expect(await store.jobs.transitions(newId(), job.id, 0, 100)).toBeUndefined();
    expect(await store.jobs.transitions(ws.apiUserId, newId(), 0, 100)).toBeUndefined();
    await store.queue.move('cancel', { id: job.id, now: T0 + SEC });
    expect(await store.jobs.deleteJob(ws.apiUserId, job.id)).toBe(true);
    expect(await store.jobs.transitions(ws.apiUserId, job.id, 0, 100)).toBeUndefined();
    // The same id again starts a history of its own: the old rows are gone, not hidden.
    await insert('queued', job.id);
    expect(await statuses(job.id)).toEqual(['queued']);
  });

  it('keeps the request id of the creating request on the job', async () => {
    const job = await insert('queued', newId(), 'req-42');
    expect(job.requestId).toBe('req-42');
    expect((await store.queue.findJob(job.id))!.requestId).toBe('req-42');
    expect((await insert()).requestId).toBeNull();
    await claim();
    expect((await store.queue.findJob(job.id))!.requestId).toBe('req-42');
  });

  it('announces changed for every move at its commit, never for a rolled-back one', async () => {
    const heard: JobEvent[] = [];
    const off = store.onEvent((e) => e.kind === 'changed' && heard.push(e));
    const job = await insert();
    expect(heard).toEqual([]);
    const c = (await claim())!;
    expect(heard).toEqual([{ kind: 'changed', jobId: job.id }]);
    await store.transaction(async (tx) => {
      await tx.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC });
      expect(heard).toHaveLength(1);
    });
    expect(heard).toHaveLength(2);
    await store
      .transaction(async (tx) => {
        await tx.queue.move('markSampling', { id: c.id, leaseId: c.leaseId!, now: T0 + 3 * SEC });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(heard).toHaveLength(2);
    off();
  });

  it('tells the other processes sharing the store of every move (PostgreSQL NOTIFY from the trigger; SQLite wake sockets)', async () => {
    const other = await f.openAnother();
    const heard: string[] = [];
    const stop = await other.listen!((e) => {
      if (e.kind === 'changed') heard.push(e.jobId);
    });
    try {
      const job: JobRecord = await insert();
      const c = (await claim())!;
      await store.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC });
      await store.queue.move('cancel', { id: c.id, now: T0 + 3 * SEC });
      // Each move once; PostgreSQL delivers its own session's NOTIFYs to the other handle only.
      await waitFor(async () => heard.length >= 3, 'three changed events in the other handle');
      expect(heard).toEqual([job.id, job.id, job.id]);
    } finally {
      await stop();
    }
  });
});
