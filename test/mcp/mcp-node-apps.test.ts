import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { PUBLIC_URL, createTestApp, errorOf, get, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { isPng } from '../helpers/media.js';
import { IMAGE_THEN_VIDEO, IMAGE_THEN_VIDEO_PRICE, execute, ledgerOf, publishGraph } from '../helpers/node-apps.js';
import { advancing, call, callError, connect, listen } from './mcp-client.js';

/**
 * execute_node_app: the use case POST /node-apps/{id}/execute calls, answering one job (not the
 * HTTP array of one) that runs the version's graph on the real local engine.
 */

type Job = { job_id: string; type: string; status: string; result?: { urls: Record<string, string> }; error?: unknown };

const INPUTS = { prompt: 'a lighthouse on a cliff', motion: 'slow push-in' };

describe.each(backends)('MCP execute_node_app on $name', (backend) => {
  let t: TestApp;
  let client: Client;
  let other: { token: string; client: Client };

  beforeAll(async () => {
    t = await createTestApp({ backend, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), pollMs: 50 } });
    const url = await listen(t);
    client = await connect(url, t.token);
    const ws = await t.newWorkspace('other');
    other = { token: ws.token, client: await connect(url, ws.token) };
  });
  afterAll(async () => {
    await client.close();
    await other.client.close();
    await t.close();
  });

  it('runs a published two-step graph: one job, its outputs by name in result.urls and as resource links, billed once', async () => {
    const { versionId, slug } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const created = await call<Job>(client, 'execute_node_app', { node_app_version_id: versionId, inputs: INPUTS });
    expect(Array.isArray(created)).toBe(false);
    expect(created).toMatchObject({ type: `node-app/${slug}`, status: 'queued' });
    expect(created).not.toHaveProperty('result');

    const ended = await jobWhenEnded<Job>(t, created.job_id);
    expect(ended.error).toBeUndefined();
    const res = (await client.callTool({ name: 'get_job', arguments: { job_id: created.job_id } })) as CallToolResult;
    const job = res.structuredContent as Job;
    expect(job).toEqual(ended);
    expect(job.status).toBe('completed');
    expect(job.result!.urls).toEqual({
      image: expect.stringMatching(`^${PUBLIC_URL}/outputs/[A-Za-z0-9_-]{32}/image\\.png$`),
      video: expect.stringMatching(`^${PUBLIC_URL}/outputs/[A-Za-z0-9_-]{32}/video\\.mp4$`),
    });
    expect(res.content.filter((c) => c.type === 'resource_link').map((c) => [c.name, c.uri, c.mimeType])).toEqual([
      ['image', job.result!.urls.image, 'image/png'],
      ['video', job.result!.urls.video, 'video/mp4'],
    ]);
    const png = await t.app.inject({ method: 'GET', url: new URL(job.result!.urls.image!).pathname });
    expect(isPng(png.rawPayload)).toBe(true);
    expect(await ledgerOf(t, job.job_id)).toEqual([
      { kind: 'hold', amount: IMAGE_THEN_VIDEO_PRICE },
      { kind: 'charge', amount: IMAGE_THEN_VIDEO_PRICE },
    ]);
  });

  it('with wait_seconds answers the job completed, as get_job shows it', async () => {
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const pending = client.callTool({ name: 'execute_node_app', arguments: { node_app_version_id: versionId, inputs: INPUTS, wait_seconds: 60 } });
    const res = (await advancing(t.clock, pending, 20)) as CallToolResult;
    const job = res.structuredContent as Job;
    expect(job.status).toBe('completed');
    expect(Object.keys(job.result!.urls).sort()).toEqual(['image', 'video']);
    expect(job).toEqual((await get(t, `/jobs/${job.job_id}`)).json());
  });

  it('refuses a version without a graph with the 400 message the HTTP API gives', async () => {
    const { versionId } = await publishGraph(t, null);
    const http = errorOf(await execute(t, versionId, INPUTS), 400);
    expect(http).toMatch(/has no graph/);
    expect((await callError(client, 'execute_node_app', { node_app_version_id: versionId, inputs: INPUTS })).message).toBe(http);
  });

  it('refuses inputs its input schema does not take, and another workspace, as the HTTP API does', async () => {
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const bad = { motion: 'pan' };
    const http = errorOf(await execute(t, versionId, bad), 400);
    expect(http).toMatch(/prompt/);
    expect((await callError(client, 'execute_node_app', { node_app_version_id: versionId, inputs: bad })).message).toBe(http);
    const missing = errorOf(await execute(t, versionId, INPUTS, {}, other.token), 404);
    expect((await callError(other.client, 'execute_node_app', { node_app_version_id: versionId, inputs: INPUTS })).message).toBe(missing);
  });
});
