import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get, walkPages, BAD_PAGE_QUERIES } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const OWNER = 'owner@localhost';
const INPUT = {
  type: 'object',
  title: 'Upscale request',
  properties: { image_url: { type: 'string', format: 'uri' }, scale: { type: 'integer', enum: [2, 4] } },
  required: ['image_url'],
  additionalProperties: false,
};
const OUTPUT = { type: 'object', properties: { url: { type: 'string' } } };

const FIELDS_2_5 = [
  'author_id',
  'created_at',
  'description',
  'example_outputs',
  'id',
  'input_openapi_schema',
  'name',
  'node_app_version_id',
  'output_openapi_schema',
  'scope',
  'slug',
  'updated_at',
  'username',
  'version',
  'version_created_at',
  'workspace_id',
];

interface VersionJson {
  id: string;
  version: number;
  version_created_at: string;
  node_app_version_id: string;
  [key: string]: unknown;
}

interface Page {
  items: VersionJson[];
  next_cursor: string | null;
}

async function newApp(t: TestApp, name = 'Upscaler Pro', workspace = t.workspaceId, as = OWNER): Promise<string> {
  return (await t.services.nodeApps.create({ workspace, name, description: 'Makes images larger', asEmail: as })).id;
}

async function publish(t: TestApp, nodeAppId: string, n: number, as = OWNER) {
  const urls = Array.from({ length: n % 3 }, (_, i) => `https://cdn.example.test/${n}/${i}.png`);
  return t.services.nodeApps.publish({ nodeAppId, inputSchema: INPUT, outputSchema: OUTPUT, exampleOutputs: urls, asEmail: as });
}

function listAll(t: TestApp, appId: string, limit: number): Promise<{ items: VersionJson[]; pages: number }> {
  return walkPages<VersionJson>(t, `/node-apps/${appId}/versions?limit=${limit}`);
}

describe.each(backends)('GET /node-apps/{id}/versions on $name', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(() => t.close());

  it('lists every field of spec 2.5 with its value, newest version first', async () => {
    const created = '2026-11-22T12:00:00.000000Z';
    const appId = await newApp(t, '  Upscaler Pro  ', t.workspaceId, 'Owner@LocalHost');
    t.clock.advance(1500);
    const v1 = await publish(t, appId, 1);
    t.clock.advance(60_000);
    const v2 = await publish(t, appId, 2);
    const res = await get(t, `/node-apps/${appId}/versions`);
    expect(res.statusCode).toBe(200);
    const page = res.json() as Page;
    expect(page.next_cursor).toBeNull();
    expect(page.items).toHaveLength(2);
    for (const item of page.items) expect(Object.keys(item).sort()).toEqual(FIELDS_2_5);
    const app = {
      id: appId,
      author_id: OWNER,
      workspace_id: t.workspaceId,
      name: 'Upscaler Pro',
      slug: 'upscaler-pro',
      description: 'Makes images larger',
      scope: 'workspace',
      created_at: created,
      updated_at: '2026-11-22T12:01:01.500000Z',
      username: 'owner',
      input_openapi_schema: INPUT,
      // `required` absent from the file is given as [].
      output_openapi_schema: { ...OUTPUT, required: [] },
    };
    expect(page.items[0]).toEqual({
      ...app,
      version: 2,
      version_created_at: '2026-11-22T12:01:01.500000Z',
      example_outputs: ['https://cdn.example.test/2/0.png', 'https://cdn.example.test/2/1.png'],
      node_app_version_id: v2.version.id,
    });
    expect(page.items[1]).toEqual({
      ...app,
      version: 1,
      version_created_at: '2026-11-22T12:00:01.500000Z',
      example_outputs: ['https://cdn.example.test/1/0.png'],
      node_app_version_id: v1.version.id,
    });
    expect(v1.version.id).not.toBe(v2.version.id);
    expect(v1.version.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('pages through versions published in the same millisecond without skipping or repeating one', async () => {
    const appId = await newApp(t);
    for (let i = 1; i <= 23; i++) await publish(t, appId, i); // the clock does not move
    t.clock.advance(1);
    for (let i = 24; i <= 30; i++) await publish(t, appId, i);
    const { items, pages } = await listAll(t, appId, 4);
    expect(pages).toBe(8);
    expect(items.map((v) => v.version)).toEqual(Array.from({ length: 30 }, (_, i) => 30 - i));
    expect(new Set(items.map((v) => v.node_app_version_id)).size).toBe(30);
    const times = items.map((v) => v.version_created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(new Set(times).size).toBe(30);
  });

  it('next_cursor is the last item time while more remain, and null on the last page even when exactly full', async () => {
    const appId = await newApp(t);
    for (let i = 1; i <= 4; i++) {
      await publish(t, appId, i);
      t.clock.advance(1000);
    }
    expect((await get(t, `/node-apps/${appId}/versions?limit=4`)).json().next_cursor).toBeNull();
    const first = (await get(t, `/node-apps/${appId}/versions?limit=3`)).json() as Page;
    expect(first.items.map((v) => v.version)).toEqual([4, 3, 2]);
    expect(first.next_cursor).toBe(first.items[2]!.version_created_at);
    const last = (await get(t, `/node-apps/${appId}/versions?limit=3&cursor=${encodeURIComponent(first.next_cursor!)}`)).json() as Page;
    expect(last.items.map((v) => v.version)).toEqual([1]);
    expect(last.next_cursor).toBeNull();
  });

  it('cursor returns versions created strictly before that time, in any ISO 8601 UTC form', async () => {
    const appId = await newApp(t);
    await publish(t, appId, 1); // 12:00:00
    t.clock.advance(1000);
    await publish(t, appId, 2); // 12:00:01
    t.clock.advance(1000);
    await publish(t, appId, 3); // 12:00:02
    for (const cursor of ['2026-11-22T12:00:01Z', '2026-11-22T12:00:01.000000Z', '2026-11-22T13:00:01+01:00']) {
      const page = (await get(t, `/node-apps/${appId}/versions?cursor=${encodeURIComponent(cursor)}`)).json() as Page;
      expect(page.items.map((v) => v.version), cursor).toEqual([1]);
    }
    const after = (await get(t, `/node-apps/${appId}/versions?cursor=${encodeURIComponent('2026-11-22T12:00:01.000001Z')}`)).json() as Page;
    expect(after.items.map((v) => v.version)).toEqual([2, 1]);
  });

  it('an app with no versions yet lists no items and a null cursor', async () => {
    const appId = await newApp(t);
    expect((await get(t, `/node-apps/${appId}/versions`)).json()).toEqual({ items: [], next_cursor: null });
  });

  it('lists only the named app, and takes its id in upper case', async () => {
    const a = await newApp(t, 'A');
    const b = await newApp(t, 'B');
    await publish(t, a, 1);
    await publish(t, b, 1);
    await publish(t, b, 2);
    const page = (await get(t, `/node-apps/${a.toUpperCase()}/versions`)).json() as Page;
    expect(page.items.map((v) => [v.id, v.version])).toEqual([[a, 1]]);
  });

  it('returns 100 versions by default and up to limit=1000', async () => {
    const appId = await newApp(t);
    for (let i = 1; i <= 101; i++) await publish(t, appId, i);
    const def = (await get(t, `/node-apps/${appId}/versions`)).json() as Page;
    expect(def.items).toHaveLength(100);
    expect(def.next_cursor).not.toBeNull();
    expect(((await get(t, `/node-apps/${appId}/versions?limit=1000`)).json() as Page).items).toHaveLength(101);
  });

  it("is 404 for an unknown, a malformed, or another workspace's app id, with a JSON error naming it", async () => {
    const other = await t.newWorkspace('other');
    const theirs = await newApp(t, 'Theirs', other.workspaceId, 'owner@other.test');
    await publish(t, theirs, 1, 'owner@other.test');
    expect((await get(t, `/node-apps/${theirs}/versions`, other.token)).statusCode).toBe(200);
    for (const id of ['3f1d2c4b-0000-4000-8000-000000000000', 'not-a-uuid', `${theirs}1`, theirs]) {
      expect(errorOf(await get(t, `/node-apps/${id}/versions`), 404), id).toBe(`node app '${id}' not found`);
    }
  });
});

describe('GET /node-apps/{id}/versions requests', () => {
  let t: TestApp;
  let appId: string;
  beforeAll(async () => {
    t = await createTestApp();
    appId = await newApp(t);
  });
  afterAll(() => t.close());

  it.each<[string, string]>([
    ...BAD_PAGE_QUERIES,
    ['cursor=', 'cursor'],
    ['limt=5', 'limt'],
    ['status=queued', 'status'],
  ])('?%s is 400 naming %s', async (query, param) => {
    expect(errorOf(await get(t, `/node-apps/${appId}/versions?${query}`), 400)).toContain(`'${param}'`);
  });

  it('a bad query is 400 even for an unknown app id', async () => {
    errorOf(await get(t, '/node-apps/not-a-uuid/versions?limit=0'), 400);
  });

  it("a cursor whose '+' arrived as a space says to percent-encode it", async () => {
    expect(errorOf(await get(t, `/node-apps/${appId}/versions?cursor=2026-11-22T13:00:00+01:00`), 400)).toContain('%2B');
  });

  it('is 401 without a token, and with an unknown one', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/node-apps/${appId}/versions` });
    expect(errorOf(res, 401)).toMatch(/Authorization/);
    errorOf(await get(t, `/node-apps/${appId}/versions`, 'mg_notarealtokenatall'), 401);
  });

  it('is in the OpenAPI document with its parameters, the 2.5 item and its error answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/node-apps/{node_app_id}/versions'].get;
    expect(op.operationId).toBe('listNodeAppVersions');
    expect(op.tags).toEqual(['node-apps']);
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual(['path:node_app_id', 'query:cursor', 'query:limit']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '503']);
    // Named components, referenced with $ref.
    const component = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];
    const page = component(op.responses['200'].content['application/json'].schema.$ref);
    expect(Object.keys(page.properties)).toEqual(['items', 'next_cursor']);
    expect(Object.keys(component(page.properties.items.items.$ref).properties).sort()).toEqual(FIELDS_2_5);
  });
});
