import { beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { AuthContext } from '../../src/services/identity/identity.js';
import { canSee } from '../../src/services/styles/style-inputs.js';
import type { NewStyle } from '../../src/store/style-store.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;
const ADA = 'ada@ws.test';
const BOB = 'bob@ws.test';

describe.each(backends)('style store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: { id: string; apiUserId: string };
  beforeEach(() => {
    store = f.store;
    ws = f.ws;
  });

  const style = (over: Partial<NewStyle> = {}): NewStyle => ({
    id: newId(),
    workspaceId: ws.id,
    apiUserId: ws.apiUserId,
    trainedBy: ADA,
    jobId: newId(),
    title: 'Ink wash',
    model: 'flux_dev',
    type: 'Style',
    triggerWord: 'inkwash',
    urls: ['/outputs/k/cover.png'],
    coverUrl: '/outputs/k/cover.png',
    outputKey: newId(),
    artifact: { palette: [[1, 2, 3]], contrast: 1.2 },
    ...over,
  });

  async function otherWorkspace(): Promise<{ id: string; apiUserId: string }> {
    const apiUserId = newId();
    const w = await store.identity.createWorkspace({ id: newId(), name: 'other', ownerEmail: 'o@other.test', apiUserId, maxConcurrentJobs: 2, maxBackloggedJobs: 3, now: T0 });
    return { id: w!.id, apiUserId };
  }

  const list = (memberEmail: string, over: Partial<Parameters<Store['styles']['listStyles']>[0]> = {}) =>
    store.styles.listStyles({ workspaceId: ws.id, memberEmail, filter: 'all', limit: 100, ...over }).then((rows) => rows.map((r) => r.id));

  it('stores a style and reads it back, its artifact apart', async () => {
    const given = style();
    const s = await store.styles.insertStyle(given, T0);
    expect(s).toEqual({
      id: given.id,
      workspaceId: ws.id,
      apiUserId: ws.apiUserId,
      trainedBy: ADA,
      jobId: given.jobId,
      title: 'Ink wash',
      model: 'flux_dev',
      type: 'Style',
      triggerWord: 'inkwash',
      public: false,
      sharedWithWorkspace: false,
      urls: ['/outputs/k/cover.png'],
      coverUrl: '/outputs/k/cover.png',
      outputKey: given.outputKey,
      likeCount: 0,
      shareLinkAt: null,
      createdAt: T0,
      updatedAt: T0,
    });
    expect(await store.styles.getStyle(s.id)).toEqual(s);
    expect(await store.styles.getArtifact(s.id)).toEqual({ palette: [[1, 2, 3]], contrast: 1.2 });
    expect(await store.styles.getStyle(newId())).toBeUndefined();
    expect(await store.styles.getArtifact(newId())).toBeUndefined();
  });

  it('keeps nulls as nulls', async () => {
    const s = await store.styles.insertStyle(style({ trainedBy: null, jobId: null, title: null, type: null, triggerWord: null, urls: [], coverUrl: null, outputKey: null }), T0);
    expect(await store.styles.getStyle(s.id)).toMatchObject({ trainedBy: null, jobId: null, title: null, type: null, triggerWord: null, urls: [], coverUrl: null, outputKey: null });
  });

  it('gives styles created at the same instant, or with the clock going back, strictly increasing times per workspace', async () => {
    const times: number[] = [];
    for (const now of [T0, T0, T0 - 5 * SEC, T0 + 1]) times.push((await store.styles.insertStyle(style(), now)).createdAt);
    expect(times).toEqual([T0, T0 + 1, T0 + 2, T0 + 3]);
    const other = await otherWorkspace();
    expect((await store.styles.insertStyle(style({ workspaceId: other.id, apiUserId: other.apiUserId }), T0)).createdAt).toBe(T0);
  });

  it('makes at most one style per training job', async () => {
    const jobId = newId();
    await store.styles.insertStyle(style({ jobId }), T0);
    await expect(store.styles.insertStyle(style({ jobId }), T0 + SEC)).rejects.toThrow();
  });

  it("lists a member's own styles and those shared by others: user and shared split all in two", async () => {
    const adas = await store.styles.insertStyle(style(), T0);
    const adasShared = await store.styles.insertStyle(style(), T0 + SEC);
    const bobs = await store.styles.insertStyle(style({ trainedBy: BOB }), T0 + 2 * SEC);
    const bobsShared = await store.styles.insertStyle(style({ trainedBy: BOB }), T0 + 3 * SEC);
    const nobodys = await store.styles.insertStyle(style({ trainedBy: null }), T0 + 4 * SEC);
    for (const s of [adasShared, bobsShared]) await store.styles.updateStyle(s.id, { sharedWithWorkspace: true }, T0 + 5 * SEC);
    expect(await list(ADA)).toEqual([bobsShared.id, adasShared.id, adas.id]);
    expect(await list(ADA, { filter: 'user' })).toEqual([adasShared.id, adas.id]);
    expect(await list(ADA, { filter: 'shared' })).toEqual([bobsShared.id]);
    expect(await list(BOB)).toEqual([bobsShared.id, bobs.id, adasShared.id]);
    expect(await list('carol@ws.test')).toEqual([bobsShared.id, adasShared.id]);
    await store.styles.updateStyle(nobodys.id, { sharedWithWorkspace: true }, T0 + 6 * SEC);
    expect(await list('carol@ws.test', { filter: 'shared' })).toEqual([nobodys.id, bobsShared.id, adasShared.id]);
    // Public lists it in its own workspace as shared does; another workspace lists nothing of it.
    await store.styles.updateStyle(bobs.id, { public: true }, T0 + 7 * SEC);
    expect(await list(ADA)).toEqual([nobodys.id, bobsShared.id, bobs.id, adasShared.id, adas.id]);
    expect(await list(ADA, { filter: 'shared' })).toEqual([nobodys.id, bobsShared.id, bobs.id]);
    expect(await list(BOB, { filter: 'shared' })).toEqual([nobodys.id, adasShared.id]);
    const other = await otherWorkspace();
    expect(await store.styles.listStyles({ workspaceId: other.id, memberEmail: ADA, filter: 'all', limit: 100 })).toEqual([]);
  });

  it("lists exactly the workspace's styles canSee lets the member see, whatever their sharing and publicity", async () => {
    const other = await otherWorkspace();
    const made = [];
    let at = T0;
    for (const trainedBy of [ADA, BOB, null]) {
      for (const sharedWithWorkspace of [false, true]) {
        for (const isPublic of [false, true]) {
          for (const where of [ws, other]) {
            const s = await store.styles.insertStyle(style({ trainedBy, workspaceId: where.id, apiUserId: where.apiUserId }), (at += SEC));
            made.push((await store.styles.updateStyle(s.id, { sharedWithWorkspace, public: isPublic }, at))!);
          }
        }
      }
    }
    for (const member of [ADA, BOB, 'carol@ws.test']) {
      const auth = { workspace: { id: ws.id }, memberEmail: member } as AuthContext;
      const seen = made.filter((s) => s.workspaceId === ws.id && canSee(s, auth)).map((s) => s.id).reverse();
      expect(await list(member)).toEqual(seen);
      const [user, shared] = [await list(member, { filter: 'user' }), await list(member, { filter: 'shared' })];
      expect([...user, ...shared].sort()).toEqual([...seen].sort());
      expect(user.filter((id) => shared.includes(id))).toEqual([]);
    }
  });

  it('filters by ids and base model, and pages by time', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await store.styles.insertStyle(style({ model: i % 2 === 0 ? 'flux_dev' : 'qwen' }), T0 + i * SEC));
    const ids = made.map((s) => s.id).reverse();
    expect(await list(ADA, { ids: [made[0]!.id, made[3]!.id, newId()] })).toEqual([made[3]!.id, made[0]!.id]);
    expect(await list(ADA, { ids: [] })).toEqual([]);
    expect(await list(ADA, { model: 'qwen' })).toEqual([made[3]!.id, made[1]!.id]);
    expect(await list(ADA, { model: 'wan' })).toEqual([]);
    expect(await list(ADA, { limit: 2 })).toEqual(ids.slice(0, 2));
    expect(await list(ADA, { limit: 2, before: made[3]!.createdAt })).toEqual(ids.slice(2, 4));
    expect(await list(ADA, { before: made[0]!.createdAt })).toEqual([]);
  });

  it('changes the fields a patch names, and only those', async () => {
    const s = await store.styles.insertStyle(style(), T0);
    const titled = await store.styles.updateStyle(s.id, { title: 'Soft ink' }, T0 + SEC);
    expect(titled).toEqual({ ...s, title: 'Soft ink', updatedAt: T0 + SEC });
    const all = await store.styles.updateStyle(s.id, { public: true, urls: ['https://e.test/a.png', 'https://e.test/b.png'], coverUrl: 'https://e.test/a.png', sharedWithWorkspace: true }, T0 + 2 * SEC);
    expect(all).toEqual({ ...titled, public: true, urls: ['https://e.test/a.png', 'https://e.test/b.png'], coverUrl: 'https://e.test/a.png', sharedWithWorkspace: true, updatedAt: T0 + 2 * SEC });
    expect(await store.styles.getStyle(s.id)).toEqual(all);
    expect(await store.styles.getArtifact(s.id)).toEqual(style().artifact);
    expect(await store.styles.updateStyle(newId(), { title: 'x' }, T0)).toBeUndefined();
  });

  it('records the first share link once', async () => {
    const s = await store.styles.insertStyle(style(), T0);
    expect(await store.styles.markShareLink(s.id, T0 + SEC)).toBe(true);
    expect(await store.styles.markShareLink(s.id, T0 + 2 * SEC)).toBe(false);
    expect((await store.styles.getStyle(s.id))!.shareLinkAt).toBe(T0 + SEC);
    expect(await store.styles.markShareLink(newId(), T0)).toBe(false);
  });

  it("keeps and serves a style's output key after its training job is deleted", async () => {
    const job = await store.jobs.insertJob(
      { id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type: 'loraTraining', status: 'queued', request: { name: 'x' }, webhookUrl: null, zeroDataRetention: false, createdBy: ADA },
      T0,
    );
    expect((await store.jobs.getJob(ws.apiUserId, job.id))!.createdBy).toBe(ADA);
    const claimed = await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 60 * SEC, outputKey: newId(), now: T0 + SEC });
    const key = claimed!.outputKey!;
    const unheld = newId();
    expect(await store.styles.holdsOutputKey(key)).toBe(false);
    await store.styles.insertStyle(style({ jobId: job.id, outputKey: key }), T0 + 2 * SEC);
    expect(await store.styles.holdsOutputKey(key)).toBe(true);
    await store.jobs.deleteJob(ws.apiUserId, job.id);
    expect(await store.jobs.outputKeysInUse([key, unheld])).toEqual(new Set([key]));
    expect(await store.jobs.jobOutputKeysServed([key, unheld])).toEqual(new Set([key]));
  });

  it('joins a transaction: a style inserted in one that rolls back is gone', async () => {
    const given = style();
    await expect(
      store.transaction(async (tx) => {
        await tx.styles.insertStyle(given, T0);
        expect(await tx.styles.getStyle(given.id)).toBeDefined();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.styles.getStyle(given.id)).toBeUndefined();
  });
});
