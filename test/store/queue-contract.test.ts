import { beforeEach, describe, expect, it } from 'vitest';
import { MOVES, JOB_STATUSES } from '../../src/domain/states.js';
import type { JobStatus } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import type { JobMoveName, JobRecord, Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

describe.each(backends)('queue store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: { id: string; apiUserId: string };
  beforeEach(() => {
    store = f.store;
    ws = f.ws;
  });

  const insert = (status: JobStatus = 'queued', at = T0) =>
    store.jobs.insertJob(
      { id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type: 'image/vendor-b/model-b-1', status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' },
      at,
    );
  const claim = (s: Store = store, now = T0 + SEC) =>
    s.queue.claim({ leaseId: newId(), leaseExpiresAt: now + 30 * SEC, outputKey: newId(), now });
  /** A job in `status`; a running one is claimed (the only queued job) and moved on under its lease. */
  const jobIn = async (status: JobStatus): Promise<{ job: JobRecord; leaseId: string }> => {
    const path = ['scheduled', 'processing', 'sampling', 'intermediate-complete'] as const;
    const steps = path.indexOf(status as (typeof path)[number]);
    if (steps < 0) return { job: await insert(status), leaseId: newId() };
    const job = await insert();
    const c = (await claim())!;
    expect(c.id).toBe(job.id);
    const stages = ['start', 'markSampling', 'markIntermediate'] as const;
    for (const stage of stages.slice(0, steps)) await store.queue.move(stage, { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC });
    return { job: (await store.queue.findJob(c.id))!, leaseId: c.leaseId! };
  };

  it('claims the oldest queued job under a lease, and nothing when the queue is empty', async () => {
    await insert('backlogged');
    const a = await insert();
    await insert();
    const c = await claim();
    expect(c).toMatchObject({ id: a.id, status: 'scheduled', attempts: 1, startedAt: T0 + SEC, leaseExpiresAt: T0 + 31 * SEC });
    expect(c!.leaseId).toBeTruthy();
    expect(c!.outputKey).toBeTruthy();
    await claim();
    expect(await claim()).toBeUndefined();
  });

  const leases = (n: number) => Array.from({ length: n }, () => ({ leaseId: newId(), outputKey: newId() }));

  it('claims up to max of the oldest claimable jobs in one statement, each under its own lease and output key, and no more than are claimable', async () => {
    await insert('backlogged');
    const jobs = [await insert(), await insert(), await insert()];
    const given = leases(2);
    const first = await store.queue.claimMany({ leases: given, leaseExpiresAt: T0 + 30 * SEC, now: T0 + SEC });
    expect(first.map((j) => j.id)).toEqual([jobs[0]!.id, jobs[1]!.id]);
    expect(first.map((j) => [j.status, j.leaseId, j.outputKey])).toEqual(given.map((l) => ['scheduled', l.leaseId, l.outputKey]));
    const rest = await store.queue.claimMany({ leases: leases(5), leaseExpiresAt: T0 + 30 * SEC, now: T0 + SEC });
    expect(rest.map((j) => j.id)).toEqual([jobs[2]!.id]);
    expect(await store.queue.claimMany({ leases: leases(5), leaseExpiresAt: T0 + 30 * SEC, now: T0 + SEC })).toEqual([]);
    expect(await store.queue.admissionCounts(ws.id)).toEqual({ active: 3, backlogged: 1 });
  });

  it('a batch claim keeps to its type filter and leaves a job waiting out its backoff', async () => {
    const typed = (type: string) =>
      store.jobs.insertJob({ id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type, status: 'queued', request: {}, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' }, T0);
    const a = await typed('remote/a');
    const b = await typed('remote/b');
    const waiting = await typed('remote/a');
    const c = (await claim())!;
    expect(c.id).toBe(a.id);
    await store.queue.move('requeue', { id: a.id, leaseId: c.leaseId!, patch: { faultRetryAt: T0 + 60 * SEC }, now: T0 + 2 * SEC });
    const only = await store.queue.claimMany({ leases: leases(5), leaseExpiresAt: T0 + 99 * SEC, now: T0 + 3 * SEC, types: { only: ['remote/a'] } });
    expect(only.map((j) => j.id)).toEqual([waiting.id]);
    const except = await store.queue.claimMany({ leases: leases(5), leaseExpiresAt: T0 + 99 * SEC, now: T0 + 61 * SEC, types: { except: ['remote/b'] } });
    expect(except.map((j) => j.id)).toEqual([a.id]);
    expect((await store.queue.findJob(b.id))!.status).toBe('queued');
  });

  it('concurrent batch claims on separate connections take every job exactly once', async () => {
    const many = 60;
    for (let i = 0; i < many; i++) await insert('queued', T0 + i);
    const handles = [store, await f.openAnother(), await f.openAnother()];
    const taken: string[] = [];
    await Promise.all(
      handles.flatMap((h) =>
        Array.from({ length: 3 }, async () => {
          for (;;) {
            const got = await h.queue.claimMany({ leases: leases(4), leaseExpiresAt: T0 + 99 * SEC, now: T0 + SEC });
            if (got.length === 0) return;
            taken.push(...got.map((j) => j.id));
          }
        }),
      ),
    );
    expect(taken).toHaveLength(many);
    expect(new Set(taken).size).toBe(many);
  });

  it('keeps the first start time and output key when a job is claimed again', async () => {
    await insert();
    const first = await claim();
    const back = await store.queue.move('requeue', { id: first!.id, leaseId: first!.leaseId!, now: T0 + 2 * SEC });
    expect(back).toMatchObject({ status: 'queued', leaseId: null, leaseExpiresAt: null });
    const second = await claim(store, T0 + 5 * SEC);
    expect(second).toMatchObject({ id: first!.id, attempts: 2, startedAt: first!.startedAt, outputKey: first!.outputKey });
    expect(second!.leaseId).not.toBe(first!.leaseId);
  });

  it('moves a job only from the status and lease it expects', async () => {
    await insert();
    const c = (await claim())!;
    const wrongStatus = await store.queue.move('markSampling', { id: c.id, leaseId: c.leaseId!, now: T0 });
    expect(wrongStatus).toBeUndefined();
    const wrongLease = await store.queue.move('start', { id: c.id, leaseId: newId(), now: T0 });
    expect(wrongLease).toBeUndefined();
    expect(await store.queue.findJob(c.id)).toMatchObject({ status: 'scheduled', updatedAt: c.updatedAt });
    const moved = await store.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 7 });
    expect(moved).toMatchObject({ status: 'processing', updatedAt: T0 + 7 });
    // Completing needs the engine to have sampled: the guard comes from the named move.
    expect(await store.queue.move('complete', { id: c.id, leaseId: c.leaseId!, patch: { result: { urls: [] } }, now: T0 + 8 })).toBeUndefined();
    await store.queue.move('markSampling', { id: c.id, leaseId: c.leaseId!, now: T0 + 8 });
    const done = await store.queue.move('complete', {
      id: c.id,
      leaseId: c.leaseId!,
      patch: { result: { urls: ['outputs/k/output.png'] }, completedAt: T0 + 9 },
      now: T0 + 10,
    });
    // Ending a job ends its lease and sets its completion time; the request stays (no zero data retention).
    expect(done).toMatchObject({ status: 'completed', completedAt: T0 + 9, result: { urls: ['outputs/k/output.png'] }, request: { prompt: 'p' }, leaseId: null, leaseExpiresAt: null });
  });

  it('refuses every named move from a status outside its guard, and makes it from every status inside', async () => {
    const moves = (Object.keys(MOVES) as (keyof typeof MOVES)[]).filter((n): n is JobMoveName => n !== 'claim');
    for (const name of moves) {
      const rule = MOVES[name];
      for (const status of JOB_STATUSES) {
        const { job, leaseId } = await jobIn(status);
        const moved = await store.queue.move(name, { id: job.id, leaseId, now: T0 + 9 * SEC });
        const legal = (rule.from as readonly JobStatus[]).includes(status);
        expect({ name, status, moved: moved?.status }).toEqual({ name, status, moved: legal ? rule.to : undefined });
        expect((await store.queue.findJob(job.id))!.status).toBe(legal ? rule.to : status);
        // Out of the way: the next running job must be the only queued one when it is claimed.
        await store.queue.move('cancel', { id: job.id, now: T0 + 9 * SEC });
      }
    }
  });

  it('erases the request of a zero-data-retention job when it ends, and only then', async () => {
    const j = await store.jobs.insertJob(
      { id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type: 'image/vendor-b/model-b-1', status: 'queued', request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: true, createdBy: 'owner@localhost' },
      T0,
    );
    const c = (await claim())!;
    expect(c.id).toBe(j.id);
    expect(await store.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC })).toMatchObject({ request: { prompt: 'p' } });
    expect(await store.queue.move('fail', { id: c.id, leaseId: c.leaseId!, patch: { error: { code: 'x' } }, now: T0 + 3 * SEC })).toMatchObject({
      status: 'failed',
      request: {},
      completedAt: T0 + 3 * SEC,
      error: { code: 'x' },
    });
  });

  it('extends a lease only while its holder still has the running job', async () => {
    await insert();
    const c = (await claim())!;
    expect(await store.queue.extendLease(c.id, c.leaseId!, T0 + 60 * SEC)).toBe(true);
    expect((await store.queue.findJob(c.id))!.leaseExpiresAt).toBe(T0 + 60 * SEC);
    expect(await store.queue.extendLease(c.id, newId(), T0 + 90 * SEC)).toBe(false);
    await store.queue.move('cancel', { id: c.id, now: T0 });
    expect(await store.queue.extendLease(c.id, c.leaseId!, T0 + 90 * SEC)).toBe(false);
  });

  it('stores a remote worker\'s progress with its lease, and a new claim starts it afresh', async () => {
    await insert();
    const c = (await claim())!;
    expect(c.progress).toBeNull();
    expect(await store.queue.extendLease(c.id, c.leaseId!, T0 + 60 * SEC, 0.375)).toBe(true);
    expect(await store.queue.extendLease(c.id, c.leaseId!, T0 + 61 * SEC)).toBe(true);
    expect((await store.queue.findJob(c.id))!.progress).toBe(0.375);
    expect(await store.queue.extendLease(c.id, newId(), T0 + 62 * SEC, 0.9)).toBe(false);
    await store.queue.move('requeue', { id: c.id, leaseId: c.leaseId!, now: T0 + 2 * SEC });
    expect((await claim(store, T0 + 3 * SEC))!.progress).toBeNull();
  });

  it('lists active jobs of the given types that outlived their cutoff: first claimed before it, or queued since before it', async () => {
    const typed = (type: string, status: JobStatus, at: number) =>
      store.jobs.insertJob({ id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type, status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' }, at);
    // In creation order: a user's creation times only increase.
    const waiting = await typed('remote/a', 'queued', T0);
    const otherType = await typed('local/b', 'queued', T0);
    const backlogged = await typed('remote/a', 'backlogged', T0);
    const young = await typed('remote/a', 'queued', T0 + 50 * SEC);
    const cutoffs = [{ type: 'remote/a', before: T0 + 40 * SEC }];
    expect((await store.queue.overdueJobs(cutoffs, 10)).map((j) => j.id)).toEqual([waiting.id]);
    // Claimed at T0 + 30 s: running, its first claim is before the cutoff.
    const running = (await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 99 * SEC, outputKey: newId(), now: T0 + 30 * SEC, types: { only: ['remote/a'] } }))!;
    expect(running.id).toBe(waiting.id);
    expect((await store.queue.overdueJobs(cutoffs, 10)).map((j) => j.id)).toEqual([waiting.id]);
    expect(await store.queue.overdueJobs([{ type: 'remote/a', before: T0 + 20 * SEC }], 10)).toEqual([]);
    expect(await store.queue.overdueJobs([], 10)).toEqual([]);
    expect((await store.queue.overdueJobs([...cutoffs, { type: 'local/b', before: T0 + SEC }], 10)).map((j) => j.id).sort()).toEqual([waiting.id, otherType.id].sort());
    void young;
    void backlogged;
  });

  it('lists overdue jobs of several types oldest first, at most the limit over all of them', async () => {
    const typed = (type: string, at: number) =>
      store.jobs.insertJob({ id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type, status: 'queued', request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' }, at);
    const a1 = await typed('remote/a', T0);
    const b1 = await typed('remote/b', T0 + SEC);
    const a2 = await typed('remote/a', T0 + 2 * SEC);
    const b2 = await typed('remote/b', T0 + 3 * SEC);
    const cutoffs = [{ type: 'remote/b', before: T0 + 40 * SEC }, { type: 'remote/a', before: T0 + 40 * SEC }];
    expect((await store.queue.overdueJobs(cutoffs, 10)).map((j) => j.id)).toEqual([a1.id, b1.id, a2.id, b2.id]);
    expect((await store.queue.overdueJobs(cutoffs, 3)).map((j) => j.id)).toEqual([a1.id, b1.id, a2.id]);
  });

  it('a move with unchangedSince is refused when the job changed status after it (expire racing a claim and requeue)', async () => {
    const job = await insert();
    const c = (await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 99 * SEC, outputKey: newId(), now: T0 + 50 * SEC }))!;
    await store.queue.move('requeue', { id: c.id, leaseId: c.leaseId!, now: T0 + 60 * SEC });
    expect(await store.queue.move('expire', { id: job.id, now: T0 + 70 * SEC, unchangedSince: T0 + 40 * SEC })).toBeUndefined();
    expect((await store.queue.findJob(job.id))!.status).toBe('queued');
    expect((await store.queue.move('expire', { id: job.id, now: T0 + 70 * SEC, unchangedSince: T0 + 60 * SEC }))!.status).toBe('failed');
  });

  it('lists running jobs whose lease ran out, oldest expiry first', async () => {
    await insert();
    await insert();
    const a = (await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 20 * SEC, outputKey: 'a', now: T0 }))!;
    const b = (await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 10 * SEC, outputKey: 'b', now: T0 }))!;
    expect(await store.queue.expiredLeases(T0 + 10 * SEC, 10)).toEqual([]);
    expect((await store.queue.expiredLeases(T0 + 11 * SEC, 10)).map((j) => j.id)).toEqual([b.id]);
    expect((await store.queue.expiredLeases(T0 + 21 * SEC, 10)).map((j) => j.id)).toEqual([b.id, a.id]);
  });

  it('keeps admission counts, finds backlogged jobs in creation order, and locks the workspace', async () => {
    const b1 = await insert('backlogged');
    const b2 = await insert('backlogged');
    await insert();
    expect(await store.queue.admissionCounts(ws.id)).toEqual({ active: 1, backlogged: 2 });
    expect(await store.queue.oldestBacklogged(ws.id, 5)).toEqual([b1.id, b2.id]);
    expect(await store.queue.oldestBacklogged(ws.id, 1)).toEqual([b1.id]);
    expect(await store.queue.workspacesWithBacklog()).toEqual([ws.id]);
    expect(await store.transaction((tx) => tx.queue.lockWorkspace(ws.id))).toEqual({ workspaceId: ws.id, maxConcurrentJobs: 2, maxBackloggedJobs: 3 });
    expect(await store.queue.lockWorkspace(newId())).toBeUndefined();
  });

  it("announces events to this process's listeners only once their transaction commits", async () => {
    const heard: unknown[] = [];
    const off = store.onEvent((e) => heard.push(e));
    await store.transaction(async (tx) => {
      await tx.queue.notify({ kind: 'cancelled', jobId: 'j1' });
      await tx.queue.notify({ kind: 'webhook' });
      expect(heard).toEqual([]);
    });
    expect(heard).toEqual([{ kind: 'cancelled', jobId: 'j1' }, { kind: 'webhook' }]);
    await expect(
      store.transaction(async (tx) => {
        await tx.queue.notify({ kind: 'queued' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(heard).toHaveLength(2);
    // A single call is its own transaction.
    await store.queue.notify({ kind: 'queued' });
    expect(heard).toHaveLength(3);
    off();
    await store.queue.notify({ kind: 'queued' });
    expect(heard).toHaveLength(3);
  });

  it('delivers events to other handles only when their transaction commits', async () => {
    // PostgreSQL: LISTEN/NOTIFY; SQLite: the wake sockets of the processes sharing its file.
    expect(store.listen).toBeDefined();
    const other = await f.openAnother();
    const heard: unknown[] = [];
    const stop = await other.listen!((e) => heard.push(e));
    await store.transaction(async (tx) => {
      await tx.queue.notify({ kind: 'cancelled', jobId: 'j1' });
      expect(heard).toEqual([]);
    });
    await expect(
      store.transaction(async (tx) => {
        await tx.queue.notify({ kind: 'queued' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await store.queue.notify({ kind: 'queued' });
    for (let i = 0; i < 100 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(heard).toEqual([{ kind: 'cancelled', jobId: 'j1' }, { kind: 'queued' }]);
    await stop();
  });

  it('does not hand a store its own events back through the channel: it told its process at commit', async () => {
    const other = await f.openAnother();
    const heard: unknown[] = [];
    const stop = await store.listen!((e) => heard.push(e));
    await store.queue.notify({ kind: 'cancelled', jobId: 'mine' });
    await other.queue.notify({ kind: 'cancelled', jobId: 'theirs' });
    for (let i = 0; i < 100 && heard.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    // Ours went first: had it come back, it would have come before theirs.
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).toEqual([{ kind: 'cancelled', jobId: 'theirs' }]);
    await stop();
  });

  // Two handles in one process only work where lock waits do not block the event loop.
  it.skipIf(!backend.asyncLocks)('never gives one job to two claimers racing on separate connections', async () => {
    for (let i = 0; i < 30; i++) await insert();
    const handles = [store, ...(await Promise.all([f.openAnother(), f.openAnother(), f.openAnother()]))];
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => claim(handles[i % handles.length])));
    const got = claims.filter((c) => c !== undefined).map((c) => c!.id);
    expect(got).toHaveLength(30);
    expect(new Set(got).size).toBe(30);
  });
});
