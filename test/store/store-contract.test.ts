import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/domain/states.js';
import { hashToken, newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';

const T0 = Date.UTC(2026, 10, 22) * 1000;

describe.each(backends)('store contract: $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.create>>;
  let store: Store;
  const extra: Store[] = [];

  beforeEach(async () => {
    db = await backend.create();
    store = await db.open();
  });
  afterEach(async () => {
    for (const s of extra.splice(0)) await s.close();
    await store.close();
    await db.drop();
  });

  async function workspace(name = 'ws') {
    const ws = await store.identity.createWorkspace({
      id: newId(),
      name,
      ownerEmail: `owner@${name}.test`,
      apiUserId: newId(),
      maxConcurrentJobs: 4,
      maxBackloggedJobs: 100,
      now: T0,
    });
    const token = await store.identity.insertToken({
      id: newId(),
      workspaceId: ws!.id,
      name: 't',
      tokenHash: hashToken(`secret-${name}`),
      createdBy: `owner@${name}.test`,
      now: T0,
    });
    const owner = await store.identity.findTokenByHash(hashToken(`secret-${name}`));
    return { ws: ws!, token, apiUserId: owner!.apiUserId };
  }

  const newJob = (w: { ws: { id: string }; apiUserId: string }, type = 'image/vendor-b/model-b-1', status: JobStatus = 'queued') => ({
    id: newId(),
    workspaceId: w.ws.id,
    apiUserId: w.apiUserId,
    type,
    status,
    request: { prompt: 'p', width: 1024 },
    webhookUrl: null,
    zeroDataRetention: false,
    createdBy: 'owner@localhost',
  });

  it('creates a workspace with its owner and API user, and refuses a taken name', async () => {
    const { ws, apiUserId } = await workspace('alpha');
    expect(ws).toMatchObject({ name: 'alpha', apiAccess: true, maxConcurrentJobs: 4, maxBackloggedJobs: 100 });
    expect(await store.identity.getMember(ws.id, 'owner@alpha.test')).toMatchObject({ role: 'owner' });
    expect(apiUserId).toMatch(/-/);
    expect(await store.identity.findWorkspace('alpha')).toEqual(ws);
    expect(await store.identity.findWorkspace(ws.id)).toEqual(ws);
    expect(await store.identity.countWorkspaces()).toBe(1);
    const dup = await store.identity.createWorkspace({ id: newId(), name: 'alpha', ownerEmail: 'x@y.z', apiUserId: newId(), maxConcurrentJobs: 1, maxBackloggedJobs: 1, now: T0 });
    expect(dup).toBeUndefined();
  });

  it('updates workspace settings', async () => {
    const { ws } = await workspace();
    const updated = await store.identity.updateWorkspace(ws.id, { apiAccess: false, maxConcurrentJobs: 2 });
    expect(updated).toMatchObject({ apiAccess: false, maxConcurrentJobs: 2, maxBackloggedJobs: 100 });
  });

  it('adds members and changes their roles', async () => {
    const { ws } = await workspace();
    await store.identity.putMember({ workspaceId: ws.id, email: 'a@b.c', role: 'member', createdAt: T0 });
    await store.identity.putMember({ workspaceId: ws.id, email: 'a@b.c', role: 'admin', createdAt: T0 });
    expect(await store.identity.getMember(ws.id, 'a@b.c')).toMatchObject({ role: 'admin' });
  });

  it('lists workspaces oldest first (then by name) and members oldest first (then by email)', async () => {
    expect(await store.identity.listWorkspaces()).toEqual([]);
    const { ws: b } = await workspace('beta');
    const { ws: a } = await workspace('alpha');
    expect((await store.identity.listWorkspaces()).map((w) => w.name)).toEqual(['alpha', 'beta']);
    expect(await store.identity.listWorkspaces()).toEqual([a, b]);
    await store.identity.putMember({ workspaceId: a.id, email: 'z@b.c', role: 'member', createdAt: T0 + 2 });
    await store.identity.putMember({ workspaceId: a.id, email: 'y@b.c', role: 'admin', createdAt: T0 + 1 });
    await store.identity.putMember({ workspaceId: a.id, email: 'x@b.c', role: 'admin', createdAt: T0 + 1 });
    const members = await store.identity.listMembers(a.id);
    expect(members.map((m) => [m.email, m.role])).toEqual([
      ['owner@alpha.test', 'owner'],
      ['x@b.c', 'admin'],
      ['y@b.c', 'admin'],
      ['z@b.c', 'member'],
    ]);
    expect(members[0]).toEqual({ workspaceId: a.id, email: 'owner@alpha.test', role: 'owner', createdAt: T0 });
    expect((await store.identity.listMembers(b.id)).map((m) => m.email)).toEqual(['owner@beta.test']);
  });

  it('finds tokens only by hash, records use and revocation', async () => {
    const { ws, token } = await workspace();
    expect(await store.identity.findTokenByHash(hashToken('wrong'))).toBeUndefined();
    await store.identity.touchToken(token.id, T0 + 5, T0);
    // A touch whose interval has not passed since the last recorded use changes nothing.
    await store.identity.touchToken(token.id, T0 + 7, T0 + 4);
    const revoked = await store.identity.revokeToken(ws.id, token.id, T0 + 10);
    expect(revoked).toMatchObject({ lastUsedAt: T0 + 5, revokedAt: T0 + 10 });
    // A second revocation keeps the first time.
    expect((await store.identity.revokeToken(ws.id, token.id, T0 + 20))!.revokedAt).toBe(T0 + 10);
    expect(await store.identity.revokeToken(ws.id, newId(), T0)).toBeUndefined();
    expect((await store.identity.listTokens(ws.id)).map((t) => t.id)).toEqual([token.id]);
  });

  it('gives jobs created at the same instant strictly increasing creation times', async () => {
    const w = await workspace();
    const jobs = await Promise.all(Array.from({ length: 50 }, () => store.jobs.insertJob(newJob(w), T0)));
    const times = jobs.map((j) => j.createdAt).sort((a, b) => a - b);
    expect(new Set(times).size).toBe(50);
    expect(times[0]).toBe(T0);
    expect(times[49]).toBe(T0 + 49);
    // A later job whose clock reads earlier still sorts after the newest one.
    const late = await store.jobs.insertJob(newJob(w), T0 - 1_000_000);
    expect(late.createdAt).toBe(T0 + 50);
  });

  // Two handles in one process only work where waiting for a lock does not block the event loop;
  // SQLite's cross-process case is proven with a real second process in sqlite-processes.test.ts.
  it.skipIf(!backend.asyncLocks)('keeps creation times strictly increasing across two handles on the same database', async () => {
    const w = await workspace();
    const second = await db.open();
    extra.push(second);
    const jobs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? store : second).jobs.insertJob(newJob(w), T0)),
    );
    expect(new Set(jobs.map((j) => j.createdAt)).size).toBe(40);
  });

  it.skipIf(!backend.asyncLocks)('creating the same workspace name from several handles at once succeeds exactly once', async () => {
    const handles = [store, ...(await Promise.all([db.open(), db.open(), db.open()]))];
    extra.push(...handles.slice(1));
    const results = await Promise.all(
      handles.map((h) =>
        h.identity.createWorkspace({ id: newId(), name: 'shared', ownerEmail: 'o@x.test', apiUserId: newId(), maxConcurrentJobs: 4, maxBackloggedJobs: 100, now: T0 }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.identity.countWorkspaces()).toBe(1);
  });

  it('a transaction commits all of its writes or none of them', async () => {
    const { ws } = await workspace('tx');
    await expect(
      store.transaction(async (tx) => {
        await tx.identity.putMember({ workspaceId: ws.id, email: 'kept@x.test', role: 'member', createdAt: T0 });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await store.identity.getMember(ws.id, 'kept@x.test')).toBeUndefined();
    await store.transaction(async (tx) => {
      await tx.identity.putMember({ workspaceId: ws.id, email: 'a@x.test', role: 'member', createdAt: T0 });
      await tx.identity.putMember({ workspaceId: ws.id, email: 'b@x.test', role: 'admin', createdAt: T0 });
    });
    expect(await store.identity.getMember(ws.id, 'b@x.test')).toMatchObject({ role: 'admin' });
  });

  it('reads times and counts back as numbers', async () => {
    const w = await workspace('types');
    const job = await store.jobs.insertJob(newJob(w), T0);
    const [listed] = await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 1 });
    expect(typeof listed!.createdAt).toBe('number');
    expect(listed!.createdAt).toBe(job.createdAt);
    expect(typeof (await store.identity.countWorkspaces())).toBe('number');
  });

  it('reads a job for the API as its view columns only, the same values the full record holds', async () => {
    const w = await workspace('summary');
    const job = await store.jobs.insertJob(newJob(w), T0);
    const view = ['id', 'type', 'status', 'createdAt', 'completedAt', 'result', 'error', 'tags'];
    const summary = await store.jobs.getJobSummary(w.apiUserId, job.id);
    expect(Object.keys(summary!).sort()).toEqual([...view].sort());
    expect(summary).toEqual(Object.fromEntries(view.map((k) => [k, job[k as keyof typeof job]])));
    const [listed] = await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 1 });
    expect(listed).toEqual(summary);
    expect(await store.jobs.getJobSummary('someone-else', job.id)).toBeUndefined();
  });

  it('lists newest first, before a cursor, by types and status, up to a limit', async () => {
    const w = await workspace();
    const a = await store.jobs.insertJob(newJob(w, 'image/vendor-b/model-b-1'), T0);
    const b = await store.jobs.insertJob(newJob(w, 'video/vendor-f/model-f'), T0 + 10);
    const c = await store.jobs.insertJob(newJob(w, 'image/vendor-b/model-b-1', 'failed'), T0 + 20);
    const ids = (js: { id: string }[]) => js.map((j) => j.id);
    expect(ids(await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 10 }))).toEqual([c.id, b.id, a.id]);
    expect(ids(await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 2 }))).toEqual([c.id, b.id]);
    expect(ids(await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 10, before: c.createdAt }))).toEqual([b.id, a.id]);
    expect(ids(await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 10, types: ['image/vendor-b/model-b-1'] }))).toEqual([c.id, a.id]);
    expect(ids(await store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 10, status: 'queued' }))).toEqual([b.id, a.id]);
  });

  it("keeps a job's tags on it and in job_tags: lists by one tag (newest first, before a cursor, with types and status), and deletes them with it", async () => {
    const w = await workspace();
    const [a, b] = await store.jobs.insertJobs([{ ...newJob(w), tags: ['campaign-7', 'team-a'] }, { ...newJob(w, 'video/vendor-f/model-f'), tags: ['team-a'] }], T0);
    const untagged = await store.jobs.insertJob(newJob(w), T0 + 10);
    const c = await store.jobs.insertJob({ ...newJob(w, 'image/vendor-b/model-b-1', 'failed'), tags: ['team-a'] }, T0 + 20);
    expect([a!.tags, b!.tags, untagged.tags, c.tags]).toEqual([['campaign-7', 'team-a'], ['team-a'], [], ['team-a']]);
    expect((await store.jobs.getJob(w.apiUserId, a!.id))!.tags).toEqual(['campaign-7', 'team-a']);
    const ids = (js: { id: string }[]) => js.map((j) => j.id);
    const byTag = (q: Partial<Parameters<typeof store.jobs.listJobs>[0]>) => store.jobs.listJobs({ apiUserId: w.apiUserId, limit: 10, tag: 'team-a', ...q });
    expect(ids(await byTag({}))).toEqual([c.id, b!.id, a!.id]);
    expect(ids(await byTag({ tag: 'campaign-7' }))).toEqual([a!.id]);
    expect(ids(await byTag({ limit: 2 }))).toEqual([c.id, b!.id]);
    expect(ids(await byTag({ before: c.createdAt }))).toEqual([b!.id, a!.id]);
    expect(ids(await byTag({ from: b!.createdAt, order: 'asc' }))).toEqual([b!.id, c.id]);
    expect(ids(await byTag({ types: ['image/vendor-b/model-b-1'] }))).toEqual([c.id, a!.id]);
    expect(ids(await byTag({ status: 'queued' }))).toEqual([b!.id, a!.id]);
    expect(await byTag({ apiUserId: 'someone-else' })).toEqual([]);
    expect(await store.jobs.deleteJob(w.apiUserId, a!.id)).toBe(true);
    expect(ids(await byTag({ tag: 'campaign-7' }))).toEqual([]);
    expect(ids(await byTag({}))).toEqual([c.id, b!.id]);
  });

  it('round-trips a job and scopes reads and deletes to its API user', async () => {
    const w = await workspace('one');
    const other = await workspace('two');
    const job = await store.jobs.insertJob({ ...newJob(w), webhookUrl: 'https://hooks.example/x', zeroDataRetention: true }, T0);
    expect(await store.jobs.getJob(w.apiUserId, job.id)).toEqual(job);
    expect(job).toMatchObject({ status: 'queued', completedAt: null, result: null, error: null, zeroDataRetention: true, request: { prompt: 'p', width: 1024 } });
    expect(await store.jobs.getJob(other.apiUserId, job.id)).toBeUndefined();
    expect(await store.jobs.deleteJob(other.apiUserId, job.id)).toBe(false);
    expect(await store.jobs.deleteJob(w.apiUserId, job.id)).toBe(true);
    expect(await store.jobs.getJob(w.apiUserId, job.id)).toBeUndefined();
  });

  it('reopening an existing database keeps its data (migrations are idempotent)', async () => {
    const { ws } = await workspace();
    const again = await db.open();
    extra.push(again);
    expect(await again.identity.findWorkspace(ws.id)).toEqual(ws);
  });
});
