import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { EngineRouter } from '../../src/engines/router.js';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { CUSTOM_MODELS, GRADIENT, MORPH, TONE } from '../helpers/custom-models.js';
import { OWNER, execute, ledgerOf, publishGraph } from '../helpers/node-apps.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';
import { call, connect, listen } from '../mcp/mcp-client.js';
import { MINIMAL } from './generate-support.js';

/**
 * Models declared in the config file's `models`, served like the built-ins: the OpenAPI document,
 * GET /models, the MCP listing, validation, prices and admission. Their jobs wait for remote
 * workers: the in-process worker never claims them (the worker protocol's tests run them).
 */

type Op = { operationId: string; tags: string[]; requestBody: { content: { 'application/json': { schema: { $ref: string }; example: unknown } } } };
type Doc = { paths: Record<string, { post?: Op }>; components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> } };

const B1 = 'image/vendor-b/model-b-1';
const D_FAST = 'video/vendor-d/model-d-fast';

/** The ScriptedEngine under the id `local`, running every model, so the runtime's bindings route to it. */
class LocalStandIn implements BindableEngine {
  readonly name = 'local';
  readonly scripted = new ScriptedEngine();
  canRun(): boolean {
    return true;
  }
  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    return this.scripted.run(job, ctx);
  }
}

const statusOf = async (t: TestApp, id: string) => ((await get(t, `/jobs/${id}`)).json() as { status: string }).status;

describe('custom models through the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ models: [...CUSTOM_MODELS] });
  });
  afterAll(() => t.close());

  it('are in the OpenAPI document: a route each, a named request component with field examples, an example body', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<Doc>();
    const op = doc.paths[`/generate/${GRADIENT}`]!.post!;
    expect(op.operationId).toBe('generateImageAcmeGradientV1');
    expect(op.tags).toEqual(['image generation']);
    const body = op.requestBody.content['application/json'];
    expect(body.schema).toEqual({ $ref: '#/components/schemas/ImageAcmeGradientV1Request' });
    expect(body.example).toEqual({});
    expect(doc.components.schemas.ImageAcmeGradientV1Request!.properties.width).toMatchObject({ type: 'integer', examples: [1024] });
    expect(doc.paths[`/generate/${MORPH}`]!.post!.requestBody.content['application/json'].example).toEqual({ image_url: 'https://assets.example/input.png', seconds: 1 });
  });

  it('are listed by GET /models with their price rule in words and their rates, and by the MCP tool list_models', async () => {
    const tone = (await get(t, `/models/${encodeURIComponent(TONE)}`)).json<Record<string, unknown>>();
    expect(tone).toMatchObject({
      id: TONE,
      kind: 'audio',
      description: 'A WAV tone of one frequency',
      available: true,
      price: { description: 'per second of duration', rates_micro_usd: { per_second: 2000 } },
      request_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false },
    });
    const ids = (await get(t, '/models')).json<{ items: { id: string }[] }>().items.map((m) => m.id);
    expect(ids.slice(-3)).toEqual([GRADIENT, TONE, MORPH]);
    const client: Client = await connect(await listen(t), t.token);
    try {
      const { items } = await call<{ items: { id: string; price?: string }[] }>(client, 'list_models', { kind: 'image' });
      expect(items.find((m) => m.id === GRADIENT)!.price).toBe(
        '$0.001 per megapixel; per megapixel of width x height (width x height / 1,000,000 times per_megapixel, rounded up to a whole micro-USD)',
      );
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain('generate');
    } finally {
      await client.close();
    }
  });

  it('validate bodies strictly, naming the field', async () => {
    expect(errorOf(await generate(t, GRADIENT, { width: 'wide' }), 400)).toBe("'width' must be integer");
    expect(errorOf(await generate(t, GRADIENT, { width: 8 }), 400)).toBe("'width' must be >= 16");
    expect(errorOf(await generate(t, GRADIENT, { colors: ['#000000', 'red'] }), 400)).toBe("'colors[1]' must match the pattern ^#[0-9a-fA-F]{6}$");
    expect(errorOf(await generate(t, GRADIENT, { depth: 3 }), 400)).toBe("unknown property 'depth'");
    expect(errorOf(await generate(t, MORPH, { seconds: 2 }), 400)).toBe("missing required property 'image_url'");
    expect(errorOf(await generate(t, MORPH, { image_url: 'file:///etc/passwd', seconds: 2 }), 400)).toBe("'image_url' must be an http(s) URL or a base64 data: URI");
    // A media-url field is a URL field like the built-ins': literal private addresses are refused at the door.
    expect(errorOf(await generate(t, MORPH, { image_url: 'http://127.0.0.1/x.png', seconds: 2 }), 400)).toMatch(/^image_url refused: /);
  });

  it('hold the price their rule computes and create a queued job with the defaults filled in', async () => {
    const res = await generate(t, GRADIENT, { width: 1024, height: 768 });
    expect(res.statusCode, res.body).toBe(200);
    const job = res.json<{ job_id: string; type: string; status: string }>();
    expect(job).toMatchObject({ type: GRADIENT, status: 'queued' });
    expect(await ledgerOf(t, job.job_id)).toEqual([{ kind: 'hold', amount: 787 }]);
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    expect((await t.store.jobs.getJob(auth.apiUserId, job.job_id))!.request).toEqual({ width: 1024, height: 768, colors: ['#000000', '#ffffff'] });
    const tone = (await generate(t, TONE, { duration: 3.5 })).json<{ job_id: string }>();
    expect(await ledgerOf(t, tone.job_id)).toEqual([{ kind: 'hold', amount: 7000 }]);
  });

  it('cannot be a node app step, at publish and at execute: node apps run their steps in-process', async () => {
    const app = await t.services.nodeApps.create({ workspace: t.workspaceId, name: 'Gradients', asEmail: OWNER });
    const graph = { steps: [{ id: 'g', model: GRADIENT, input: { width: 64 } }], outputs: { image: '{{steps.g.urls[0]}}' } };
    const outputSchema = { type: 'object', properties: { image: { type: 'string' } } };
    await expect(
      t.services.nodeApps.publish({ nodeAppId: app.id, inputSchema: { type: 'object', properties: {} }, outputSchema, exampleOutputs: [], graph, asEmail: OWNER }),
    ).rejects.toThrow(`graph.steps[0].model: model '${GRADIENT}' runs on remote workers (pool 'python'), and a node app's steps run on this server's own engines; it cannot be a step`);
    // A version stored before the model was bound remotely is refused at execute.
    const { versionId } = await publishGraph(t, graph, { inputSchema: { type: 'object', properties: {} } });
    expect(errorOf(await execute(t, versionId, {}), 400)).toBe(`step 'g': model '${GRADIENT}' runs on remote workers (pool 'python'), and a node app's steps run on this server's own engines; it cannot be a step`);
  });
});

describe.each(backends)('remote-bound jobs and the in-process worker on $name', (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** A test app whose worker runs the runtime's own router (over a stand-in `local`) with `modelEngines`. */
  async function appWith(modelEngines: Record<string, string>) {
    const local = new LocalStandIn();
    const probe = await createTestApp({ models: [...CUSTOM_MODELS], modelEngines, backend });
    const router = EngineRouter.build(probe.services.catalog.entries, [local], probe.services.bindings);
    await probe.close();
    return { local, app: await createTestApp({ models: [...CUSTOM_MODELS], modelEngines, backend, worker: { engine: router, pollMs: 20 } }) };
  }

  it('never claims a custom model\'s job, nor a job of a model a pattern binds to a pool, while the rest complete locally', async () => {
    const { local, app } = await appWith({ 'video/*': 'remote:x' });
    t = app;
    const ids: Record<string, string> = {};
    for (const [model, body] of [
      [GRADIENT, {}],
      [D_FAST, MINIMAL[D_FAST]],
      [B1, MINIMAL[B1]],
      [MORPH, { image_url: 'https://example.com/a.png', seconds: 2 }],
    ] as const) {
      const res = await generate(t, model, body);
      expect(res.statusCode, res.body).toBe(200);
      ids[model] = res.json<{ job_id: string }>().job_id;
    }
    await waitFor(async () => (await statusOf(t!, ids[B1]!)) === 'completed', 'the image job to complete');
    // Several polls later, the remote-bound jobs are still waiting for their workers.
    await new Promise((r) => setTimeout(r, 200));
    for (const model of [GRADIENT, D_FAST, MORPH]) expect(await statusOf(t, ids[model]!), model).toBe('queued');
    expect(local.scripted.started).toEqual([ids[B1]]);
    expect([...t.services.bindings.remote.keys()]).toEqual(expect.arrayContaining([GRADIENT, TONE, MORPH, D_FAST]));
  });

  it('without model_engines runs every built-in model locally', async () => {
    const { local, app } = await appWith({});
    t = app;
    const id = (await generate(t, D_FAST, MINIMAL[D_FAST])).json<{ job_id: string }>().job_id;
    await waitFor(async () => (await statusOf(t!, id)) === 'completed', 'the video job to complete');
    expect(local.scripted.finished).toEqual([id]);
  });
});
