import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { newId } from '../../src/lib/ids.js';
import { BAD_PAGE_QUERIES, PUBLIC_URL, createJob, createTestApp, errorOf, generate, get, jobWhenEnded, walkPages } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { StyleTestEngine, colourDataUri } from '../helpers/style-engine.js';
import { A2_MEDIUM, MINIMAL } from './generate-support.js';

/** Issue 15 point 4 and spec 5.5: who sees, uses, changes and shares a style, and every management route. */

const OWNER = 'owner@localhost';
const ADA = 'ada@example.test';

type StyleJson = { id: string; title: string | null; public: boolean; urls: string[]; cover_url: string | null; owner: { id: string; name: string } };

const send = (t: TestApp, method: 'POST' | 'PATCH' | 'DELETE', url: string, token: string, body?: unknown): Promise<LightMyRequestResponse> =>
  checkedInject(t.app, {
    method,
    url,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

const useStyle = (t: TestApp, id: string, token: string) => generate(t, A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], styles: [{ id, strength: 1 }] }, {}, token);

describe.each(backends)('style visibility and management on $name', (backend) => {
  let t: TestApp;
  /** Tokens: the owner's two, an admin's (another member of the workspace), another workspace's. */
  let owner2: string;
  let ada: string;
  let other: string;
  let id: string;

  beforeAll(async () => {
    t = await createTestApp({ backend, worker: { engine: new StyleTestEngine(), pollMs: 50 }, limits: { maxConcurrentJobs: 100, maxBackloggedJobs: 1000 } });
    await t.services.identity.addMember(t.workspaceId, ADA, 'admin', OWNER);
    ada = (await t.services.identity.createToken(t.workspaceId, 'ada', ADA)).secret;
    owner2 = (await t.services.identity.createToken(t.workspaceId, 'second', OWNER)).secret;
    other = (await t.newWorkspace('other')).token;
    const res = await createJob(t, 'loraTraining', { name: 'Blue', urls: [await colourDataUri(30, 60, 200)], trigger_word: 'bluish' });
    const job = await jobWhenEnded<{ status: string; result: { style_id: string } }>(t, res.json<{ job_id: string }>().job_id);
    expect(job.status).toBe('completed');
    id = job.result.style_id;
  });
  afterAll(() => t.close());

  const listIds = async (token: string, query = '') => (await get(t, `/styles?limit=1000${query}`, token)).json<{ items: StyleJson[] }>().items.map((s) => s.id);

  it("is seen and used by every token of the member who trained it, and by no one else's", async () => {
    for (const token of [t.token, owner2]) {
      expect((await get(t, `/styles/${id}`, token)).statusCode).toBe(200);
      expect(await listIds(token)).toContain(id);
      expect(await listIds(token, '&filter=user')).toContain(id);
      expect((await useStyle(t, id, token)).statusCode).toBe(200);
    }
    for (const token of [ada, other]) {
      expect(errorOf(await get(t, `/styles/${id}`, token), 404)).toBe(`style '${id}' not found`);
      expect(await listIds(token)).not.toContain(id);
      expect(errorOf(await useStyle(t, id, token), 400)).toMatch(/^styles\[0\]\.id names a style that does not exist or that this token may not use/);
      errorOf(await send(t, 'PATCH', `/styles/${id}`, token, { title: 'mine now' }), 404);
      errorOf(await get(t, `/styles/${id}/share/link`, token), 404);
      errorOf(await send(t, 'POST', `/styles/${id}/share/workspace`, token), 404);
      errorOf(await send(t, 'DELETE', `/styles/${id}/share/workspace`, token), 404);
    }
  });

  it('once shared with the workspace, is seen and used by its other members, who still cannot change or share it', async () => {
    const shared = await send(t, 'POST', `/styles/${id}/share/workspace`, owner2);
    expect(shared.statusCode, shared.body).toBe(200);
    expect(shared.json()).toEqual({ success: true, style_id: id, workspace: { id: t.workspaceId, name: 'default', is_default: true } });
    // Sharing again changes nothing.
    expect((await send(t, 'POST', `/styles/${id}/share/workspace`, t.token)).statusCode).toBe(200);
    expect((await get(t, `/styles/${id}`, ada)).json<StyleJson>().id).toBe(id);
    expect(await listIds(ada)).toContain(id);
    expect(await listIds(ada, '&filter=shared')).toContain(id);
    expect(await listIds(ada, '&filter=user')).not.toContain(id);
    expect(await listIds(t.token, '&filter=shared')).not.toContain(id);
    expect((await useStyle(t, id, ada)).statusCode).toBe(200);
    const notYours = `only the member whose token trained style '${id}' can`;
    expect(errorOf(await send(t, 'PATCH', `/styles/${id}`, ada, { title: 'mine now' }), 403)).toContain(notYours);
    expect(errorOf(await get(t, `/styles/${id}/share/link`, ada), 403)).toContain(notYours);
    expect(errorOf(await send(t, 'POST', `/styles/${id}/share/workspace`, ada), 403)).toContain(notYours);
    expect(errorOf(await send(t, 'DELETE', `/styles/${id}/share/workspace`, ada), 403)).toContain(notYours);
    // Still nothing for another workspace.
    errorOf(await get(t, `/styles/${id}`, other), 404);

    expect((await send(t, 'DELETE', `/styles/${id}/share/workspace`, t.token)).json()).toEqual({ success: true });
    errorOf(await get(t, `/styles/${id}`, ada), 404);
    errorOf(await useStyle(t, id, ada), 400);
    expect(errorOf(await send(t, 'DELETE', `/styles/${id}/share/workspace`, t.token), 404)).toBe(`style '${id}' is not shared with this workspace`);
  });

  it('once public and not shared, is read, listed and used by another member of its workspace, and read and used by id by another workspace', async () => {
    expect((await send(t, 'PATCH', `/styles/${id}`, t.token, { public: true })).json<StyleJson>().public).toBe(true);
    expect(await t.store.styles.getStyle(id)).toMatchObject({ public: true, sharedWithWorkspace: false });
    // Another member of the same workspace: sees it, lists it (under shared, not user), uses it.
    expect((await get(t, `/styles/${id}`, ada)).json<StyleJson>()).toMatchObject({ id, public: true });
    expect(await listIds(ada)).toContain(id);
    expect(await listIds(ada, '&filter=shared')).toContain(id);
    expect(await listIds(ada, '&filter=user')).not.toContain(id);
    expect((await useStyle(t, id, ada)).statusCode).toBe(200);
    errorOf(await send(t, 'PATCH', `/styles/${id}`, ada, { public: false }), 403);
    // Another workspace: reads and uses it by id, never lists it.
    const seen = (await get(t, `/styles/${id}`, other)).json<StyleJson>();
    expect(seen).toMatchObject({ id, public: true, owner: { name: 'default' } });
    expect((await useStyle(t, id, other)).statusCode).toBe(200);
    expect(await listIds(other)).not.toContain(id);
    errorOf(await send(t, 'PATCH', `/styles/${id}`, other, { public: false }), 403);
    errorOf(await send(t, 'POST', `/styles/${id}/share/workspace`, other), 403);
    expect((await send(t, 'PATCH', `/styles/${id}`, t.token, { public: false })).json<StyleJson>().public).toBe(false);
    errorOf(await get(t, `/styles/${id}`, other), 404);
    errorOf(await get(t, `/styles/${id}`, ada), 404);
    expect(await listIds(ada)).not.toContain(id);
  });

  it('PATCH changes title, urls and cover_url, and refuses a body with nothing to change', async () => {
    const before = (await get(t, `/styles/${id}`)).json<StyleJson>();
    const res = await send(t, 'PATCH', `/styles/${id}`, t.token, { title: 'Deep blue', urls: ['https://e.test/a.png', 'https://e.test/b.png'], cover_url: 'https://e.test/b.png', public: null });
    expect(res.statusCode, res.body).toBe(200);
    const after = res.json<StyleJson>();
    expect(after).toEqual({ ...before, title: 'Deep blue', urls: ['https://e.test/a.png', 'https://e.test/b.png'], cover_url: 'https://e.test/b.png' });
    expect((await get(t, `/styles/${id}`)).json()).toEqual(after);
    for (const [body, message] of [
      [{}, 'no field to update'],
      [{ public: null }, 'no field to update'],
      [{ title: 5 }, "'title'"],
      [{ title: '' }, "'title'"],
      [{ urls: ['nope'] }, "'urls[0]'"],
      [{ cover_url: 'ftp://e.test/a.png' }, "'cover_url'"],
      [{ likes: 3 }, "unknown property 'likes'"],
    ] as const) {
      expect(errorOf(await send(t, 'PATCH', `/styles/${id}`, t.token, body), 400)).toContain(message);
    }
    expect((await get(t, `/styles/${id}`)).json()).toEqual(after);
  });

  it('gives a share link: 201 the first time, 200 after', async () => {
    const first = await get(t, `/styles/${id}/share/link`);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({ share_link: `${PUBLIC_URL}/styles/${id}`, is_new: true });
    const again = await get(t, `/styles/${id}/share/link`, owner2);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ share_link: `${PUBLIC_URL}/styles/${id}`, is_new: false });
  });

  it('answers 404 for unknown and malformed ids alike', async () => {
    for (const bad of [newId(), 'not-a-uuid', id.toUpperCase().replace(/./, 'z')]) {
      errorOf(await get(t, `/styles/${bad}`), 404);
      errorOf(await send(t, 'PATCH', `/styles/${bad}`, t.token, { title: 'x' }), 404);
      errorOf(await get(t, `/styles/${bad}/share/link`), 404);
    }
    // Ids are UUIDs: any case reads the same style.
    expect((await get(t, `/styles/${id.toUpperCase()}`)).json<StyleJson>().id).toBe(id);
  });

  it('checks every styles[].id at creation, naming the item', async () => {
    const body = (styles: unknown) => ({ ...MINIMAL[A2_MEDIUM], styles });
    expect(errorOf(await generate(t, A2_MEDIUM, body([{ id: newId(), strength: 1 }])), 400)).toMatch(/^styles\[0\]\.id names a style/);
    expect(errorOf(await generate(t, A2_MEDIUM, body([{ id: 'watercolor', strength: 1 }])), 400)).toMatch(/^styles\[0\]\.id/);
    expect(errorOf(await generate(t, A2_MEDIUM, body([{ id, strength: 1 }, { id: newId(), strength: -1 }])), 400)).toMatch(/^styles\[1\]\.id/);
    expect((await generate(t, A2_MEDIUM, body([{ id: id.toUpperCase(), strength: 0 }]))).statusCode).toBe(200);
  });
});

describe.each(backends)('GET /styles pages and filters on $name', (backend) => {
  let t: TestApp;
  let ada: string;
  /** Every style, newest first, with who trained it, whether shared, and its base model. */
  const made: { id: string; by: string; shared: boolean; model: string }[] = [];

  beforeAll(async () => {
    t = await createTestApp({ backend });
    await t.services.identity.addMember(t.workspaceId, ADA, 'admin', OWNER);
    ada = (await t.services.identity.createToken(t.workspaceId, 'ada', ADA)).secret;
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    const models = ['flux_dev', 'qwen', 'wan'];
    for (let i = 0; i < 13; i++) {
      const by = i % 3 === 0 ? ADA : OWNER;
      const shared = i % 4 === 0;
      const model = models[i % 3]!;
      const s = await t.store.styles.insertStyle(
        { id: newId(), workspaceId: t.workspaceId, apiUserId: auth.apiUserId, trainedBy: by, jobId: null, title: `s${i}`, model, type: null, triggerWord: null, urls: [], coverUrl: null, outputKey: null, artifact: {} },
        // Several at the same instant: the store spreads them a microsecond apart.
        Date.UTC(2026, 10, 22, 12) * 1000 + Math.floor(i / 3) * 1_000_000,
      );
      if (shared) await t.store.styles.updateStyle(s.id, { sharedWithWorkspace: true }, 0);
      made.unshift({ id: s.id, by, shared, model });
    }
  });
  afterAll(() => t.close());

  const expected = (member: string, filter: 'all' | 'user' | 'shared', model?: string) =>
    made
      .filter((s) => (filter === 'user' ? s.by === member : filter === 'shared' ? s.shared && s.by !== member : s.by === member || s.shared))
      .filter((s) => model === undefined || s.model === model)
      .map((s) => s.id);

  it.each([
    ['', 'all'],
    ['&filter=all', 'all'],
    ['&filter=user', 'user'],
    ['&filter=shared', 'shared'],
  ] as const)('walks every page of ?limit=2%s exactly once, newest first', async (query, filter) => {
    for (const [token, member] of [
      [t.token, OWNER],
      [ada, ADA],
    ] as const) {
      const { items, pages } = await walkPages<StyleJson>(t, `/styles?limit=2${query}`, token);
      const want = expected(member, filter);
      expect(items.map((s) => s.id)).toEqual(want);
      expect(pages).toBe(Math.max(1, Math.ceil(want.length / 2)));
    }
  });

  it('filters by base model and by ids, comma-separated or repeated', async () => {
    const { items } = await walkPages<StyleJson>(t, '/styles?limit=3&model=qwen');
    expect(items.map((s) => s.id)).toEqual(expected(OWNER, 'all', 'qwen'));
    const mine = expected(OWNER, 'user');
    const [a, b, c] = [mine[0]!, mine[2]!, mine[4]!];
    const byIds = async (query: string) => (await get(t, `/styles?${query}`)).json<{ items: StyleJson[] }>().items.map((s) => s.id);
    expect(await byIds(`ids=${c},${a}`)).toEqual([a, c]);
    expect(await byIds(`ids=${a}&ids=${b},${c.toUpperCase()}`)).toEqual([a, b, c]);
    // Ids the token cannot see (ada's unshared) or that name nothing are simply absent.
    const adasOwn = made.find((s) => s.by === ADA && !s.shared)!.id;
    expect(await byIds(`ids=${a},${adasOwn},${newId()},nonsense`)).toEqual([a]);
    expect(await byIds(`ids=${a},${b}&filter=shared`)).toEqual([]);
  });

  it.each([
    ...BAD_PAGE_QUERIES,
    ['filter=community', 'filter'],
    ['filter=all&filter=user', 'filter'],
    ['model=sdxl', 'model'],
    ['ids=', 'ids'],
    ['ids=a,,b', 'ids'],
    ['sort=new', 'sort'],
  ])('refuses ?%s with 400 naming %s', async (query, name) => {
    expect(errorOf(await get(t, `/styles?${query}`), 400)).toContain(`'${name}'`);
  });
});
