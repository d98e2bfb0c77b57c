import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { IMAGE_THEN_VIDEO, IMAGE_THEN_VIDEO_PRICE, execute, executed, ledgerOf, publishGraph } from '../helpers/node-apps.js';

/**
 * POST /node-apps/{id}/execute up to the job's creation (no worker runs here): what the use case
 * checks and refuses, what it stores, and what it holds.
 */
describe.each(backends)('POST /node-apps/{id}/execute on $name', (backend) => {
  let t: TestApp;
  afterEach(() => t?.close());

  it('creates one pending job of type node-app/<slug> holding the steps\' summed price, and stores the run\'s plan', async () => {
    t = await createTestApp({ backend });
    const { versionId, nodeAppId, slug } = await publishGraph(t, IMAGE_THEN_VIDEO, { name: 'Lighthouse Clip' });
    expect(slug).toBe('lighthouse-clip');
    const jobId = await executed(t, versionId, { prompt: 'a lighthouse at dusk' });
    const job = (await get(t, `/jobs/${jobId}`)).json() as { type: string; status: string };
    expect(job).toMatchObject({ type: 'node-app/lighthouse-clip', status: 'queued' });
    expect(await ledgerOf(t, jobId)).toEqual([{ kind: 'hold', amount: IMAGE_THEN_VIDEO_PRICE }]);
    // The plan is self-contained: the inputs with the schema's defaults, and the graph as published.
    const stored = await t.services.runs.find(jobId);
    expect(stored!.request).toEqual({
      node_app_id: nodeAppId,
      node_app_version_id: versionId,
      inputs: { prompt: 'a lighthouse at dusk', motion: 'slow push-in' },
      graph: IMAGE_THEN_VIDEO,
    });
    // One job, listed and filtered by its type; the steps are not jobs.
    const page = (await get(t, '/jobs?types=node-app/lighthouse-clip')).json() as { items: Array<{ job_id: string }> };
    expect(page.items.map((j) => j.job_id)).toEqual([jobId]);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toHaveLength(1);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('refuses a body its version\'s input schema rejects, naming the field, and creates nothing', async () => {
    t = await createTestApp({ backend });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    expect(errorOf(await execute(t, versionId, {}), 400)).toBe("missing required property 'prompt'");
    expect(errorOf(await execute(t, versionId, { prompt: 42 }), 400)).toBe("'prompt' must be string");
    expect(errorOf(await execute(t, versionId, { prompt: 'x', colour: 'red' }), 400)).toBe("unknown property 'colour'");
    expect(errorOf(await execute(t, versionId, { prompt: '' }), 400)).toBe("'prompt' must be at least 1 character");
    expect(errorOf(await execute(t, versionId, ['a lighthouse']), 400)).toMatch(/request body must be a JSON object/);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toEqual([]);
    expect(await t.store.billing.listEntries(t.workspaceId)).toEqual([expect.objectContaining({ kind: 'top_up' })]);
  });

  it("refuses inputs that make a step's body invalid for its model, naming the step and the field", async () => {
    t = await createTestApp({ backend });
    const graph = {
      steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: '{{inputs.prompt}}', aspect_ratio: '{{inputs.aspect}}', resolution: '1K' } }],
      outputs: { image: '{{steps.img.urls[0]}}' },
    };
    const inputSchema = { type: 'object', properties: { prompt: { type: 'string' }, aspect: { type: 'string' } }, required: ['prompt', 'aspect'] };
    const { versionId } = await publishGraph(t, graph, { inputSchema });
    expect(errorOf(await execute(t, versionId, { prompt: 'x', aspect: '7:7' }), 400)).toMatch(/^step 'img': 'aspect_ratio' must be one of "1:1", /);
    expect(await executed(t, versionId, { prompt: 'x', aspect: '4:5' })).toEqual(expect.any(String));
  });

  it('refuses inputs that would make a step\'s text too long once written in, naming the field', async () => {
    t = await createTestApp({ backend });
    const graph = {
      steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: '{{inputs.p}} {{inputs.p}} {{inputs.p}}', aspect_ratio: '1:1', resolution: '1K' } }],
      outputs: { image: '{{steps.img.urls[0]}}' },
    };
    const { versionId } = await publishGraph(t, graph, { inputSchema: { type: 'object', properties: { p: { type: 'string' } }, required: ['p'] } });
    expect(errorOf(await execute(t, versionId, { p: 'x'.repeat(100_000) }), 400)).toBe('steps.img.input.prompt: longer than 262144 characters once its references are written in');
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toEqual([]);
  });

  it('refuses a literal private URL given as an input, naming the step field it reaches', async () => {
    t = await createTestApp({ backend });
    const graph = {
      steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', image_url: '{{inputs.photo}}' } }],
      outputs: { image: '{{steps.img.urls[0]}}' },
    };
    const inputSchema = { type: 'object', properties: { photo: { type: 'string', format: 'uri' } }, required: ['photo'] };
    const { versionId } = await publishGraph(t, graph, { inputSchema });
    expect(errorOf(await execute(t, versionId, { photo: 'http://127.0.0.1/cat.png' }), 400)).toMatch(/^step 'img' field 'image_url' refused: /);
    expect(errorOf(await execute(t, versionId, { photo: 'not a url' }), 400)).toBe("'photo' must be a valid uri");
  });

  it("refuses a step's style id the caller may not use, naming the step, as generation does", async () => {
    t = await createTestApp({ backend });
    const graph = {
      steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', styles: [{ id: '{{inputs.style}}', strength: 1 }] } }],
      outputs: { image: '{{steps.img.urls[0]}}' },
    };
    const inputSchema = { type: 'object', properties: { style: { type: 'string' } }, required: ['style'] };
    const { versionId } = await publishGraph(t, graph, { inputSchema });
    expect(errorOf(await execute(t, versionId, { style: '6f1c2b3a-1d2e-4f50-8a9b-0c1d2e3f4a5b' }), 400)).toMatch(/^step 'img': styles\[0\]\.id names a style that does not exist/);
  });

  it('answers 400 for a version published without a graph, saying it cannot be executed', async () => {
    t = await createTestApp({ backend });
    const { versionId } = await publishGraph(t, null, { name: 'Old App' });
    expect(errorOf(await execute(t, versionId, { prompt: 'x' }), 400)).toBe(
      "version 1 of node app 'Old App' has no graph and cannot be executed; execute a version published with a graph",
    );
  });

  it("answers 404 for an unknown or malformed version id and for another workspace's version", async () => {
    t = await createTestApp({ backend });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const other = await t.newWorkspace('other');
    expect(errorOf(await execute(t, versionId, { prompt: 'x' }, {}, other.token), 404)).toBe(`node app version '${versionId}' not found`);
    expect(errorOf(await execute(t, '5d0c2b6e-8a8f-4f3e-9b1a-6c2d7e8f9a01', { prompt: 'x' }), 404)).toMatch(/not found/);
    expect(errorOf(await execute(t, 'nope', { prompt: 'x' }), 404)).toMatch(/not found/);
  });

  it('answers 402 when the balance covers a step but not the sum of the steps, holding nothing', async () => {
    t = await createTestApp({ backend, balanceMicros: IMAGE_THEN_VIDEO_PRICE - 1 });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const res = await execute(t, versionId, { prompt: 'x' });
    expect(errorOf(res, 402)).toMatch(/^insufficient API balance: this request costs \$0\.140500 and the workspace has \$0\.140499 available/);
    expect(res.json()).toHaveProperty('message');
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: IMAGE_THEN_VIDEO_PRICE - 1, held: 0 });
  });

  it('admits like any job: backlogged past the concurrency limit, then 429 with Retry-After', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 1 } });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    await executed(t, versionId, { prompt: 'one' });
    const second = await execute(t, versionId, { prompt: 'two' });
    expect((second.json() as Array<{ status: string }>)[0]!.status).toBe('backlogged');
    const third = await execute(t, versionId, { prompt: 'three' });
    expect(errorOf(third, 429)).toMatch(/too many jobs/);
    expect(third.headers['retry-after']).toBe('5');
    expect((await expectLedgerConsistent(t.store, t.workspaceId)).held).toBe(2 * IMAGE_THEN_VIDEO_PRICE);
  });

  it("answers 410 when a step's model is past its sunset, as generation does", async () => {
    t = await createTestApp({ backend, deprecations: [{ model: 'video/vendor-e/model-e-1', sunset_date: '2026-06-01', replacement: 'video/vendor-f/model-f' }] });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const res = await execute(t, versionId, { prompt: 'x' });
    expect(res.statusCode).toBe(410);
    expect(res.json()).toMatchObject({ error: 'model_unavailable', reason: 'deprecated', replacement: 'video/vendor-f/model-f' });
  });

  it('takes X-Webhook-URL and Idempotency-Key as generation does: a retry answers the same job, replayed', async () => {
    t = await createTestApp({ backend });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const headers = { 'x-webhook-url': 'https://hooks.example/mediagen', 'idempotency-key': 'clip-1' };
    const first = await execute(t, versionId, { prompt: 'x' }, headers);
    const again = await execute(t, versionId, { prompt: 'x' }, headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(errorOf(await execute(t, versionId, { prompt: 'y' }, headers), 422)).toMatch(/different request/);
    const stored = await t.services.runs.find((first.json() as Array<{ job_id: string }>)[0]!.job_id);
    expect(stored!.webhookUrl).toBe('https://hooks.example/mediagen');
    expect(errorOf(await execute(t, versionId, { prompt: 'x' }, { 'x-webhook-url': 'ftp://hooks.example' }), 400)).toMatch(/X-Webhook-URL/);
    expect(errorOf(await execute(t, versionId, { prompt: 'x' }, { 'x-api-zero-data-retention': '1' }), 400)).toBe(
      'X-Api-Zero-Data-Retention is not supported by node apps',
    );
  });

  it('takes X-Mediagen-Tags as generation does: the job carries them, GET /jobs?tag= lists it, a bad tag is 400 naming the header', async () => {
    t = await createTestApp({ backend });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const res = await execute(t, versionId, { prompt: 'x' }, { 'x-mediagen-tags': 'team-a,clips' });
    expect(res.statusCode, res.body).toBe(200);
    const [job] = res.json<Array<{ job_id: string; tags?: string[] }>>();
    expect(job!.tags).toEqual(['clips', 'team-a']);
    expect((await get(t, '/jobs?tag=clips')).json<{ items: { job_id: string }[] }>().items.map((j) => j.job_id)).toEqual([job!.job_id]);
    expect(errorOf(await execute(t, versionId, { prompt: 'x' }, { 'x-mediagen-tags': 'Clips' }), 400)).toContain('X-Mediagen-Tags');
  });
});
