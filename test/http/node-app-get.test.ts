import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { GRAPH_INPUT, GRAPH_OUTPUT, TWO_STEP_GRAPH } from '../helpers/node-app-graphs.js';

const OWNER = 'owner@localhost';

/** The original API's node app (GET /node-apps/{id}). */
const FIELDS = [
  'author_id',
  'created_at',
  'description',
  'example_outputs',
  'id',
  'input_key_mapping',
  'input_openapi_schema',
  'last_version_id',
  'name',
  'output_key_mapping',
  'output_openapi_schema',
  'scope',
  'slug',
  'updated_at',
  'username',
  'version',
  'version_created_at',
  'workspace_id',
];

async function newApp(t: TestApp, workspace = t.workspaceId, as = OWNER): Promise<string> {
  return (await t.services.nodeApps.create({ workspace, name: 'Clip maker', description: 'A still, then a clip of it', asEmail: as })).id;
}

async function publish(t: TestApp, nodeAppId: string, graph?: unknown, as = OWNER): Promise<string> {
  const published = await t.services.nodeApps.publish({
    nodeAppId,
    inputSchema: GRAPH_INPUT,
    outputSchema: GRAPH_OUTPUT,
    exampleOutputs: ['https://cdn.example.test/clip.mp4'],
    ...(graph === undefined ? {} : { graph }),
    asEmail: as,
  });
  return published.version.id;
}

describe.each(backends)('GET /node-apps/{id} on $name', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(() => t.close());

  it('returns the app as of the version asked for, with the key mappings of its graph', async () => {
    const appId = await newApp(t);
    t.clock.advance(1000);
    const v1 = await publish(t, appId, TWO_STEP_GRAPH);
    t.clock.advance(60_000);
    const v2 = await publish(t, appId);
    const res = await get(t, `/node-apps/${v1}`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(FIELDS);
    expect(body).toEqual({
      id: appId,
      author_id: OWNER,
      workspace_id: t.workspaceId,
      name: 'Clip maker',
      slug: 'clip-maker',
      description: 'A still, then a clip of it',
      scope: 'workspace',
      created_at: '2026-11-22T12:00:00.000000Z',
      updated_at: '2026-11-22T12:01:01.000000Z',
      last_version_id: v2,
      version: 1,
      version_created_at: '2026-11-22T12:00:01.000000Z',
      username: 'owner',
      example_outputs: ['https://cdn.example.test/clip.mp4'],
      input_openapi_schema: GRAPH_INPUT,
      output_openapi_schema: GRAPH_OUTPUT,
      input_key_mapping: { prompt: 'inputs.prompt', motion: 'inputs.motion' },
      output_key_mapping: { 'steps.img.urls[0]': 'image', 'steps.vid.urls[0]': 'video' },
    });
  });

  it('a version without a graph has null key mappings, and is its own last version', async () => {
    const appId = await newApp(t);
    const v1 = await publish(t, appId);
    const body = (await get(t, `/node-apps/${v1.toUpperCase()}`)).json() as Record<string, unknown>;
    expect(body).toMatchObject({ id: appId, version: 1, last_version_id: v1, input_key_mapping: null, output_key_mapping: null });
  });

  it("is 404 for an unknown, a malformed, an app's (not a version's), or another workspace's id", async () => {
    const other = await t.newWorkspace('other');
    const theirApp = await newApp(t, other.workspaceId, 'owner@other.test');
    const theirs = await publish(t, theirApp, TWO_STEP_GRAPH, 'owner@other.test');
    const ours = await newApp(t);
    await publish(t, ours, TWO_STEP_GRAPH);
    expect((await get(t, `/node-apps/${theirs}`, other.token)).statusCode).toBe(200);
    for (const id of ['3f1d2c4b-0000-4000-8000-000000000000', 'not-a-uuid', `${theirs}1`, ours, theirs]) {
      expect(errorOf(await get(t, `/node-apps/${id}`), 404), id).toBe(`node app version '${id}' not found`);
    }
  });
});

describe('GET /node-apps/{id} requests', () => {
  let t: TestApp;
  let versionId: string;
  beforeAll(async () => {
    t = await createTestApp();
    versionId = await publish(t, await newApp(t), TWO_STEP_GRAPH);
  });
  afterAll(() => t.close());

  it('refuses any query parameter, naming it', async () => {
    expect(errorOf(await get(t, `/node-apps/${versionId}?version=2`), 400)).toContain("'version'");
  });

  it('is 401 without a token', async () => {
    errorOf(await t.app.inject({ method: 'GET', url: `/node-apps/${versionId}` }), 401);
  });

  it('is in the OpenAPI document with its parameter, the node app shape and its error answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/node-apps/{id}'].get;
    expect(op.operationId).toBe('getNodeApp');
    expect(op.tags).toEqual(doc.paths['/node-apps/{node_app_id}/versions'].get.tags);
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:id']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '503']);
    const schema = doc.components.schemas[op.responses['200'].content['application/json'].schema.$ref.replace('#/components/schemas/', '')];
    expect(Object.keys(schema.properties).sort()).toEqual(FIELDS);
    expect(Object.keys(schema.examples[0]).sort()).toEqual(FIELDS);
  });
});
