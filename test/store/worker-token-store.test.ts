import { beforeEach, describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import type { NewWorkerToken } from '../../src/store/remote-token-store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;
const B1 = 'image/vendor-b/model-b-1';
const A2 = 'image/vendor-a/model-a-2/standard';

describe.each(backends)('worker token store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  beforeEach(() => {
    store = f.store;
  });

  const token = (over: Partial<NewWorkerToken> = {}): NewWorkerToken => ({
    id: newId(),
    name: 'gpu box 1',
    tokenHash: newId().replace(/-/g, ''),
    models: ['video/*', 'image/vendor-b/model-b-1'],
    now: T0,
    ...over,
  });

  const insertJob = (type: string, status: JobStatus = 'queued') =>
    store.jobs.insertJob(
      { id: newId(), workspaceId: f.ws.id, apiUserId: f.ws.apiUserId, type, status, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'o@ws.test' },
      T0,
    );

  it('stores a token and finds it by hash and by id; lists every token oldest first', async () => {
    const given = token();
    const t = await store.workerTokens.insert(given);
    expect(t).toEqual({ id: given.id, name: 'gpu box 1', models: ['video/*', B1], createdAt: T0, lastUsedAt: null, revokedAt: null });
    expect(await store.workerTokens.findByHash(given.tokenHash)).toEqual({ token: t, tokenHash: given.tokenHash });
    expect(await store.workerTokens.findById(given.id)).toEqual({ token: t, tokenHash: given.tokenHash });
    expect(await store.workerTokens.get(given.id)).toEqual(t);
    expect(await store.workerTokens.findByHash('0'.repeat(64))).toBeUndefined();
    expect(await store.workerTokens.get(newId())).toBeUndefined();

    const later = await store.workerTokens.insert(token({ models: [], now: T0 + SEC, name: 'all' }));
    expect(later.models).toEqual([]);
    expect((await store.workerTokens.list()).map((x) => x.id)).toEqual([t.id, later.id]);
  });

  it('refuses a second token with the same hash', async () => {
    const given = token();
    await store.workerTokens.insert(given);
    await expect(store.workerTokens.insert(token({ tokenHash: given.tokenHash }))).rejects.toThrow();
  });

  it('revokes once: the first time stays, and a revoked token is still found (to be refused)', async () => {
    const given = token();
    await store.workerTokens.insert(given);
    expect((await store.workerTokens.revoke(given.id, T0 + SEC))!.revokedAt).toBe(T0 + SEC);
    expect((await store.workerTokens.revoke(given.id, T0 + 2 * SEC))!.revokedAt).toBe(T0 + SEC);
    expect((await store.workerTokens.findByHash(given.tokenHash))!.token.revokedAt).toBe(T0 + SEC);
    expect(await store.workerTokens.revoke(newId(), T0)).toBeUndefined();
  });

  it('touch writes only when the last recorded use is not later than notSince', async () => {
    const given = token();
    await store.workerTokens.insert(given);
    await store.workerTokens.touch(given.id, T0 + 10 * SEC, T0 - 50 * SEC);
    expect((await store.workerTokens.get(given.id))!.lastUsedAt).toBe(T0 + 10 * SEC);
    // Another request of the same minute: the earlier use stays.
    await store.workerTokens.touch(given.id, T0 + 20 * SEC, T0 - 40 * SEC);
    expect((await store.workerTokens.get(given.id))!.lastUsedAt).toBe(T0 + 10 * SEC);
    await store.workerTokens.touch(given.id, T0 + 80 * SEC, T0 + 20 * SEC);
    expect((await store.workerTokens.get(given.id))!.lastUsedAt).toBe(T0 + 80 * SEC);
  });

  it('upserts presence and lists the workers seen since an instant whose token is not revoked, newest first', async () => {
    const a = token();
    const b = token({ models: [] });
    await store.workerTokens.insert(a);
    await store.workerTokens.insert(b);
    const seen = (tokenId: string, name: string, at: number, pool: string | null = null, models: string[] = []) =>
      store.workerTokens.upsertPresence({ id: `${tokenId}:${name}`, tokenId, name, pool, models, lastSeenAt: at });
    await seen(a.id, 'w1', T0);
    await seen(a.id, 'w2', T0 + 5 * SEC, 'gpu-a', ['video/*']);
    await seen(b.id, 'w1', T0 + 2 * SEC);
    // A second write of one worker replaces its row.
    await seen(a.id, 'w1', T0 + 9 * SEC, 'gpu-b');

    const live = await store.workerTokens.livePresence(T0 + SEC, 100);
    expect(live).toEqual([
      { id: `${a.id}:w1`, tokenId: a.id, name: 'w1', pool: 'gpu-b', models: [], lastSeenAt: T0 + 9 * SEC, tokenModels: a.models },
      { id: `${a.id}:w2`, tokenId: a.id, name: 'w2', pool: 'gpu-a', models: ['video/*'], lastSeenAt: T0 + 5 * SEC, tokenModels: a.models },
      { id: `${b.id}:w1`, tokenId: b.id, name: 'w1', pool: null, models: [], lastSeenAt: T0 + 2 * SEC, tokenModels: [] },
    ]);
    expect((await store.workerTokens.livePresence(T0 + 6 * SEC, 100)).map((w) => w.id)).toEqual([`${a.id}:w1`]);
    expect(await store.workerTokens.livePresence(T0 + SEC, 1)).toHaveLength(1);

    await store.workerTokens.revoke(a.id, T0 + 10 * SEC);
    expect((await store.workerTokens.livePresence(T0, 100)).map((w) => w.id)).toEqual([`${b.id}:w1`]);
  });

  it('prunes presence rows last seen before an instant, oldest first, at most `limit` of them', async () => {
    const a = token();
    await store.workerTokens.insert(a);
    const seen = (name: string, at: number) => store.workerTokens.upsertPresence({ id: `${a.id}:${name}`, tokenId: a.id, name, pool: null, models: [], lastSeenAt: at });
    await seen('w3', T0 + 3 * SEC);
    await seen('w1', T0 + SEC);
    await seen('w2', T0 + 2 * SEC);
    await seen('w5', T0 + 5 * SEC);
    // A row whose token is gone is pruned all the same.
    await store.workerTokens.upsertPresence({ id: 'gone:w0', tokenId: 'gone', name: 'w0', pool: null, models: [], lastSeenAt: T0 });
    const names = async () => (await store.workerTokens.livePresence(0, 100)).map((w) => w.name).sort();

    expect(await store.workerTokens.prunePresence(T0 + 3 * SEC, 2)).toBe(2);
    expect(await names()).toEqual(['w2', 'w3', 'w5']);
    expect(await store.workerTokens.prunePresence(T0 + 3 * SEC, 10)).toBe(1);
    expect(await names()).toEqual(['w3', 'w5']);
    expect(await store.workerTokens.prunePresence(T0 + 3 * SEC, 10)).toBe(0);
    expect(await store.workerTokens.prunePresence(T0 + 10 * SEC, 0)).toBe(0);
    expect(await names()).toEqual(['w3', 'w5']);
  });

  it('counts queued jobs of the asked types only, capped in all', async () => {
    for (let i = 0; i < 3; i++) await insertJob(B1);
    await insertJob(A2);
    await insertJob(B1, 'backlogged');
    await insertJob('video/vendor-c/model-c');
    expect(await store.workerTokens.queuedCounts([B1, A2, 'audio/none'], 100)).toEqual(new Map([[B1, 3], [A2, 1]]));
    expect(await store.workerTokens.queuedCounts([B1], 2)).toEqual(new Map([[B1, 2]]));
    expect(await store.workerTokens.queuedCounts([], 100)).toEqual(new Map());
    const capped = await store.workerTokens.queuedCounts([B1, A2], 3);
    expect([...capped.values()].reduce((x, y) => x + y, 0)).toBe(3);
  });
});
