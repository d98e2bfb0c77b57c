import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { NewNodeAppVersion } from '../../src/store/node-app-store.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';

const T0 = Date.UTC(2026, 10, 22) * 1000;
const SCHEMA = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };

describe.each(backends)('node app store contract: $name', (backend) => {
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

  async function workspace(name: string): Promise<string> {
    const ws = await store.identity.createWorkspace({
      id: newId(),
      name,
      ownerEmail: `owner@${name}.test`,
      apiUserId: newId(),
      maxConcurrentJobs: 4,
      maxBackloggedJobs: 100,
      now: T0,
    });
    return ws!.id;
  }

  async function app(workspaceId: string, slug = 'my-app') {
    const created = await store.nodeApps.createNodeApp({
      id: newId(),
      workspaceId,
      name: 'My App',
      slug,
      description: 'd',
      scope: 'workspace',
      authorId: 'author@x.test',
      now: T0,
    });
    return created!;
  }

  const version = (nodeAppId: string, n = 0): NewNodeAppVersion => ({
    id: newId(),
    nodeAppId,
    inputSchema: { ...SCHEMA, title: `in ${n}` },
    outputSchema: { type: 'object', properties: {}, required: [] },
    graph: n % 2 === 0 ? null : { steps: [], outputs: { n } },
    exampleOutputs: [`https://cdn.test/${n}.png`],
    publishedBy: 'publisher@x.test',
  });

  it('stores an app and reads it back by id, within its workspace only', async () => {
    const ws = await workspace('alpha');
    const other = await workspace('beta');
    const a = await app(ws);
    expect(a).toMatchObject({ workspaceId: ws, name: 'My App', slug: 'my-app', description: 'd', scope: 'workspace', authorId: 'author@x.test', createdAt: T0, updatedAt: T0 });
    expect(await store.nodeApps.getNodeApp(ws, a.id)).toEqual(a);
    expect(await store.nodeApps.findNodeApp(a.id)).toEqual(a);
    expect(await store.nodeApps.getNodeApp(other, a.id)).toBeUndefined();
    expect(await store.nodeApps.findNodeApp(newId())).toBeUndefined();
  });

  it('reads a version by its own id with its app, within its workspace only, graph and all; and names the newest version', async () => {
    const ws = await workspace('alpha');
    const other = await workspace('beta');
    const a = await app(ws);
    expect(await store.nodeApps.lastVersionId(a.id)).toBeUndefined();
    const v1 = (await store.nodeApps.publishVersion(version(a.id, 1), T0 + 10))!;
    const v2 = (await store.nodeApps.publishVersion(version(a.id, 2), T0 + 20))!;
    expect(await store.nodeApps.getVersion(ws, v1.version.id)).toEqual({ app: v2.app, version: v1.version });
    expect(v1.version.graph).toEqual({ steps: [], outputs: { n: 1 } });
    expect((await store.nodeApps.getVersion(ws, v2.version.id))!.version.graph).toBeNull();
    expect(await store.nodeApps.getVersion(other, v1.version.id)).toBeUndefined();
    expect(await store.nodeApps.getVersion(ws, newId())).toBeUndefined();
    expect(await store.nodeApps.lastVersionId(a.id)).toBe(v2.version.id);
  });

  it('refuses a slug already taken in the same workspace, and allows it in another', async () => {
    const ws = await workspace('alpha');
    const other = await workspace('beta');
    const first = await app(ws, 'shared');
    const dup = await store.nodeApps.createNodeApp({ id: newId(), workspaceId: ws, name: 'Other', slug: 'shared', description: '', scope: 'workspace', authorId: 'a@b.c', now: T0 });
    expect(dup).toBeUndefined();
    expect(await store.nodeApps.getNodeApp(ws, first.id)).toEqual(first);
    expect(await app(other, 'shared')).toMatchObject({ workspaceId: other, slug: 'shared' });
  });

  it('numbers versions 1, 2, 3 per app, and moves the app updated_at to each publish time', async () => {
    const ws = await workspace('alpha');
    const a = await app(ws);
    const b = await app(ws, 'b');
    const v1 = await store.nodeApps.publishVersion(version(a.id, 1), T0 + 10);
    const v2 = await store.nodeApps.publishVersion(version(a.id, 2), T0 + 20);
    const b1 = await store.nodeApps.publishVersion(version(b.id), T0 + 30);
    const v3 = await store.nodeApps.publishVersion(version(a.id, 3), T0 + 40);
    expect([v1, v2, v3].map((p) => p!.version.version)).toEqual([1, 2, 3]);
    expect(b1!.version.version).toBe(1);
    expect(v3!.app).toEqual({ ...a, updatedAt: T0 + 40 });
    expect((await store.nodeApps.getNodeApp(ws, a.id))!.updatedAt).toBe(T0 + 40);
    expect(v2!.version).toMatchObject({
      nodeAppId: a.id,
      createdAt: T0 + 20,
      inputSchema: { ...SCHEMA, title: 'in 2' },
      outputSchema: { type: 'object', properties: {}, required: [] },
      exampleOutputs: ['https://cdn.test/2.png'],
      publishedBy: 'publisher@x.test',
    });
  });

  it('gives versions published at the same instant, or with the clock going back, strictly increasing times', async () => {
    const ws = await workspace('alpha');
    const a = await app(ws);
    const times: number[] = [];
    for (const now of [T0, T0, T0, T0 - 5_000_000, T0 + 2]) {
      times.push((await store.nodeApps.publishVersion(version(a.id), now))!.version.createdAt);
    }
    expect(times).toEqual([T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4]);
  });

  // Two handles in one process only work where waiting for a lock does not block the event loop.
  it.skipIf(!backend.asyncLocks)('gives concurrent publishers from two handles distinct numbers and distinct times', async () => {
    const ws = await workspace('alpha');
    const a = await app(ws);
    const second = await db.open();
    extra.push(second);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? second : store).nodeApps.publishVersion(version(a.id, i), T0)),
    );
    const numbers = results.map((r) => r!.version.version).sort((x, y) => x - y);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(results.map((r) => r!.version.createdAt)).size).toBe(10);
  });

  it.skipIf(!backend.asyncLocks)('creating one slug from several handles at once succeeds exactly once', async () => {
    const ws = await workspace('alpha');
    const handles = [store, ...(await Promise.all([db.open(), db.open(), db.open()]))];
    extra.push(...handles.slice(1));
    const results = await Promise.all(
      handles.map((h) =>
        h.nodeApps.createNodeApp({ id: newId(), workspaceId: ws, name: 'n', slug: 'race', description: '', scope: 'workspace', authorId: 'a@b.c', now: T0 }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('publishes nothing for an unknown app', async () => {
    expect(await store.nodeApps.publishVersion(version(newId()), T0)).toBeUndefined();
  });

  it('joins a surrounding transaction: a rollback takes the version and its number back', async () => {
    const ws = await workspace('alpha');
    const a = await app(ws);
    await expect(
      store.transaction(async (tx) => {
        await tx.nodeApps.publishVersion(version(a.id), T0);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.nodeApps.listVersions({ workspaceId: ws, nodeAppId: a.id, limit: 10 })).toEqual([]);
    expect((await store.nodeApps.publishVersion(version(a.id), T0))!.version.version).toBe(1);
  });

  it('lists versions newest first, only those created strictly before the cursor, up to the limit', async () => {
    const ws = await workspace('alpha');
    const a = await app(ws);
    const b = await app(ws, 'b');
    for (let i = 0; i < 5; i++) await store.nodeApps.publishVersion(version(a.id, i), T0 + i * 1000);
    await store.nodeApps.publishVersion(version(b.id), T0 + 500);
    const all = await store.nodeApps.listVersions({ workspaceId: ws, nodeAppId: a.id, limit: 100 });
    expect(all.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    expect(all.every((v) => v.nodeAppId === a.id)).toBe(true);
    const two = await store.nodeApps.listVersions({ workspaceId: ws, nodeAppId: a.id, limit: 2 });
    expect(two.map((v) => v.version)).toEqual([5, 4]);
    const before = await store.nodeApps.listVersions({ workspaceId: ws, nodeAppId: a.id, before: T0 + 2000, limit: 100 });
    expect(before.map((v) => v.version)).toEqual([2, 1]);
  });

  it("lists nothing for another workspace's app", async () => {
    const ws = await workspace('alpha');
    const other = await workspace('beta');
    const a = await app(ws);
    await store.nodeApps.publishVersion(version(a.id), T0);
    expect(await store.nodeApps.listVersions({ workspaceId: other, nodeAppId: a.id, limit: 100 })).toEqual([]);
  });

  it("lists a workspace's apps oldest first with their newest version number (0 before the first publish)", async () => {
    const ws = await workspace('alpha');
    const other = await workspace('beta');
    expect(await store.nodeApps.listNodeApps(ws)).toEqual([]);
    const a = await app(ws, 'a');
    const b = await app(ws, 'b');
    await app(other, 'c');
    await store.nodeApps.publishVersion(version(a.id), T0 + 1000);
    await store.nodeApps.publishVersion(version(a.id), T0 + 2000);
    const listed = await store.nodeApps.listNodeApps(ws);
    expect(listed.map((x) => [x.slug, x.lastVersion])).toEqual([
      ['a', 2],
      ['b', 0],
    ]);
    expect(listed[1]).toEqual({ ...b, lastVersion: 0 });
    expect(listed[0]).toMatchObject({ id: a.id, workspaceId: ws, createdAt: T0, updatedAt: T0 + 2000 });
  });
});
