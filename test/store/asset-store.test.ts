import { beforeEach, describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import type { NewAsset } from '../../src/store/asset-store.js';
import type { JobRecord, Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

describe.each(backends)('asset store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: { id: string; apiUserId: string };
  beforeEach(() => {
    store = f.store;
    ws = f.ws;
  });

  const asset = (workspaceId = ws.id, over: Partial<NewAsset> = {}): NewAsset => ({
    id: newId(),
    workspaceId,
    outputKey: newId(),
    fileName: 'asset.png',
    sizeBytes: 1000,
    mimeType: 'image/png',
    width: 64,
    height: 32,
    description: null,
    metadata: {},
    ...over,
  });

  async function otherWorkspace(): Promise<{ id: string; apiUserId: string }> {
    const apiUserId = newId();
    const w = await store.identity.createWorkspace({ id: newId(), name: 'other', ownerEmail: 'o@other.test', apiUserId, maxConcurrentJobs: 2, maxBackloggedJobs: 3, now: T0 });
    return { id: w!.id, apiUserId };
  }

  const job = (at: number, owner = ws, status: JobStatus = 'queued') =>
    store.jobs.insertJob(
      { id: newId(), workspaceId: owner.id, apiUserId: owner.apiUserId, type: 'image/vendor-b/model-b-1', status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'owner@localhost' },
      at,
    );

  /** A job moved on to `processing` under a worker's lease (it must be the only queued job). */
  async function processingJob(at: number): Promise<JobRecord> {
    const queued = await job(at);
    const c = await store.queue.claim({ leaseId: newId(), leaseExpiresAt: at + 60 * SEC, outputKey: newId(), now: at + SEC });
    expect(c!.id).toBe(queued.id);
    return (await store.queue.move('start', { id: c!.id, leaseId: c!.leaseId!, now: at + SEC }))!;
  }

  it('stores an asset and reads it back by id within its workspace, and by key from anywhere', async () => {
    const a = await store.assets.insertAsset(asset(ws.id, { description: 'a cat', metadata: { source: 'upload', tags: ['x'] }, sizeBytes: 5_000_000_000 }), T0);
    expect(a).toMatchObject({ workspaceId: ws.id, fileName: 'asset.png', sizeBytes: 5_000_000_000, mimeType: 'image/png', width: 64, height: 32, description: 'a cat', createdAt: T0, deletedAt: null });
    expect(await store.assets.getAsset(ws.id, a.id)).toEqual(a);
    expect(await store.assets.findAssetByKey(a.outputKey)).toEqual(a);
    const audio = await store.assets.insertAsset(asset(ws.id, { mimeType: 'audio/mpeg', width: null, height: null }), T0);
    expect(await store.assets.getAsset(ws.id, audio.id)).toMatchObject({ width: null, height: null, description: null, metadata: {} });
    expect(await store.assets.getAsset(ws.id, newId())).toBeUndefined();
    expect(await store.assets.findAssetByKey(newId())).toBeUndefined();
  });

  it('keeps workspaces apart: another workspace gets undefined, an empty list, zero bytes, and cannot delete', async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    const other = await otherWorkspace();
    expect(await store.assets.getAsset(other.id, a.id)).toBeUndefined();
    expect(await store.assets.listAssets({ workspaceId: other.id, limit: 10 })).toEqual([]);
    expect(await store.assets.usedBytes(other.id)).toBe(0);
    expect(await store.assets.deleteAsset(other.id, a.id, T0 + SEC)).toBeUndefined();
    expect(await store.assets.getAsset(ws.id, a.id)).toEqual(a);
  });

  it('gives assets created at the same instant, or with the clock going back, strictly increasing times per workspace', async () => {
    const other = await otherWorkspace();
    const times: number[] = [];
    for (const now of [T0, T0, T0, T0 - 5 * SEC, T0 + 2]) times.push((await store.assets.insertAsset(asset(), now)).createdAt);
    expect(times).toEqual([T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4]);
    // Another workspace's clock is its own.
    expect((await store.assets.insertAsset(asset(other.id), T0)).createdAt).toBe(T0);
  });

  it('pages newest first with an exact exclusive cursor, even when every insert shares one instant', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.assets.insertAsset(asset(), T0)).id);
    const seen: string[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await store.assets.listAssets({ workspaceId: ws.id, limit: 2, ...(before === undefined ? {} : { before }) });
      if (page.length === 0) break;
      seen.push(...page.map((a) => a.id));
      before = page[page.length - 1]!.createdAt;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('lists and gets live assets only, and counts a tombstone while its file is kept', async () => {
    const kept = await store.assets.insertAsset(asset(ws.id, { sizeBytes: 300 }), T0);
    const removed = await store.assets.insertAsset(asset(ws.id, { sizeBytes: 40 }), T0);
    const tomb = await store.assets.insertAsset(asset(ws.id, { sizeBytes: 5 }), T0);
    expect(await store.assets.usedBytes(ws.id)).toBe(345);
    expect((await store.assets.deleteAsset(ws.id, removed.id, T0 + SEC))!.filesStillNeeded).toBe(false);
    const waiting = await job(T0 + 2 * SEC);
    expect((await store.assets.deleteAsset(ws.id, tomb.id, T0 + 3 * SEC))!.filesStillNeeded).toBe(true);
    // Its file is still on the disk, kept for the job: it still counts.
    expect(await store.assets.usedBytes(ws.id)).toBe(305);
    await store.queue.move('cancel', { id: waiting.id, now: T0 + 4 * SEC });
    expect(await store.assets.usedBytes(ws.id)).toBe(300);
    expect((await store.assets.listAssets({ workspaceId: ws.id, limit: 10 })).map((a) => a.id)).toEqual([kept.id]);
    expect(await store.assets.getAsset(ws.id, tomb.id)).toBeUndefined();
  });

  it('removes the row outright when no unfinished job of the workspace exists', async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    // Neither an ended job nor another workspace's unfinished one can read this asset's file.
    const ended = await job(T0);
    await store.queue.move('cancel', { id: ended.id, now: T0 + SEC });
    const other = await otherWorkspace();
    await job(T0, other);
    const gone = await store.assets.deleteAsset(ws.id, a.id, T0 + 5 * SEC);
    expect(gone).toEqual({ asset: { ...a, deletedAt: T0 + 5 * SEC }, filesStillNeeded: false });
    expect(await store.assets.findAssetByKey(a.outputKey)).toBeUndefined();
    expect(await store.assets.getAsset(ws.id, a.id)).toBeUndefined();
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set());
    expect(await store.assets.deleteAsset(ws.id, a.id, T0 + 6 * SEC)).toBeUndefined();
  });

  it("keeps a tombstone for an unfinished job stamped after the deletion's clock, dated no earlier than that job", async () => {
    // Job times run ahead of the clock in a burst (strictly increasing per user); the job exists
    // when the asset is deleted, so it may hold the URL.
    const a = await store.assets.insertAsset(asset(), T0);
    const ahead = await job(T0 + 9 * SEC);
    const del = await store.assets.deleteAsset(ws.id, a.id, T0 + 2 * SEC);
    expect(del).toEqual({ asset: { ...a, deletedAt: ahead.createdAt }, filesStillNeeded: true });
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set([a.outputKey]));
    await store.queue.move('cancel', { id: ahead.id, now: T0 + 10 * SEC });
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set());
  });

  it('keeps a tombstone while an older job is queued, until that job is cancelled', async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    const queued = await job(T0 + SEC);
    const del = await store.assets.deleteAsset(ws.id, a.id, T0 + 2 * SEC);
    expect(del).toEqual({ asset: { ...a, deletedAt: T0 + 2 * SEC }, filesStillNeeded: true });
    expect(await store.assets.getAsset(ws.id, a.id)).toBeUndefined();
    expect(await store.assets.findAssetByKey(a.outputKey)).toEqual({ ...a, deletedAt: T0 + 2 * SEC });
    expect(await store.assets.deleteAsset(ws.id, a.id, T0 + 3 * SEC)).toBeUndefined();
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set([a.outputKey]));
    await store.queue.move('cancel', { id: queued.id, now: T0 + 4 * SEC });
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set());
  });

  it('keeps a tombstone while an older job is processing, until that job fails', async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    const running = await processingJob(T0 + SEC);
    expect((await store.assets.deleteAsset(ws.id, a.id, T0 + 3 * SEC))!.filesStillNeeded).toBe(true);
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set([a.outputKey]));
    await store.queue.move('fail', { id: running.id, leaseId: running.leaseId!, now: T0 + 4 * SEC, patch: { error: { code: 'x' } } });
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set());
  });

  it('does not keep a tombstone for a job created after the deletion', async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    const older = await job(T0 + SEC);
    await store.assets.deleteAsset(ws.id, a.id, T0 + 2 * SEC);
    await job(T0 + 3 * SEC);
    await store.queue.move('cancel', { id: older.id, now: T0 + 4 * SEC });
    expect(await store.jobs.outputKeysInUse([a.outputKey])).toEqual(new Set());
  });

  it('reports live asset keys, needed tombstones and job output keys in one call, and nothing else', async () => {
    const live = await store.assets.insertAsset(asset(), T0);
    const tomb = await store.assets.insertAsset(asset(), T0);
    const freed = await store.assets.insertAsset(asset(), T0);
    await store.assets.deleteAsset(ws.id, freed.id, T0 + SEC);
    await job(T0 + 2 * SEC);
    await store.assets.deleteAsset(ws.id, tomb.id, T0 + 3 * SEC);
    const claimed = await store.queue.claim({ leaseId: newId(), leaseExpiresAt: T0 + 60 * SEC, outputKey: newId(), now: T0 + 4 * SEC });
    const keys = [live.outputKey, tomb.outputKey, freed.outputKey, claimed!.outputKey!, newId()];
    expect(await store.jobs.outputKeysInUse(keys)).toEqual(new Set([live.outputKey, tomb.outputKey, claimed!.outputKey!]));
  });

  it("joins the caller's transaction: a rollback keeps the asset live", async () => {
    const a = await store.assets.insertAsset(asset(), T0);
    await expect(
      store.transaction(async (tx) => {
        expect((await tx.assets.deleteAsset(ws.id, a.id, T0 + SEC))!.filesStillNeeded).toBe(false);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.assets.getAsset(ws.id, a.id)).toEqual(a);
  });

  // Two handles in one process only work where waiting for a lock does not block the event loop.
  it.skipIf(!backend.asyncLocks)('gives concurrent inserts from two handles distinct times', async () => {
    const second = await f.openAnother();
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? second : store).assets.insertAsset(asset(), T0)));
    expect(new Set(made.map((a) => a.createdAt)).size).toBe(10);
    expect(await store.assets.listAssets({ workspaceId: ws.id, limit: 20 })).toHaveLength(10);
  });
});
