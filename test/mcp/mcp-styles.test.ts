import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJob, createTestApp, errorOf, get, jobWhenEnded } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { StyleTestEngine, colourDataUri } from '../helpers/style-engine.js';
import { advancing, call, callError, connect, listen } from './mcp-client.js';

/**
 * train_style, list_styles and get_style: a style trained over MCP is the one the HTTP API shows,
 * seen only in its workspace, and a refused training says what POST /styles/train says.
 */

type Job = { job_id: string; type: string; status: string; result?: { urls: string[]; style_id?: string } };
type Style = { id: string; title: string; models: string[]; cover_url: string };
type Page = { items: Style[]; next_cursor: string | null };

describe.each(backends)('MCP style tools on $name', (backend) => {
  let t: TestApp;
  let client: Client;
  let other: { token: string; client: Client };

  beforeAll(async () => {
    t = await createTestApp({ backend, worker: { engine: new StyleTestEngine(), pollMs: 50 } });
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

  /** A style trained over MCP, waited for: the completed job and its style id. */
  async function trained(name: string, rgb: [number, number, number]): Promise<{ res: CallToolResult; job: Job; id: string }> {
    const pending = client.callTool({ name: 'train_style', arguments: { name, urls: [await colourDataUri(...rgb)], trigger_word: 'tinted', wait_seconds: 60 } });
    const res = (await advancing(t.clock, pending)) as CallToolResult;
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const job = res.structuredContent as Job;
    expect(job.status).toBe('completed');
    return { res, job, id: job.result!.style_id! };
  }

  it('train_style with wait_seconds answers the completed loraTraining job with result.style_id and its cover as a link', async () => {
    const { res, job, id } = await trained('Crimson', [200, 30, 30]);
    expect(job.type).toBe('loraTraining');
    expect(job).toEqual((await get(t, `/jobs/${job.job_id}`)).json());
    const [cover] = job.result!.urls;
    expect(res.content.filter((c) => c.type === 'resource_link')).toEqual([
      { type: 'resource_link', uri: cover, name: 'cover.png', mimeType: 'image/png', description: `Output of job ${job.job_id}` },
    ]);
    expect(await call<Style>(client, 'get_style', { style_id: id })).toEqual((await get(t, `/styles/${id}`)).json());
  });

  it('list_styles shows a style trained through train_style, as GET /styles does, and filters as it does', async () => {
    const { id } = await trained('Teal', [20, 150, 150]);
    const page = await call<Page>(client, 'list_styles');
    expect(page.items.map((s) => s.id)).toContain(id);
    expect(page).toEqual((await get(t, '/styles')).json());
    expect((await call<Page>(client, 'list_styles', { ids: [id] })).items.map((s) => s.id)).toEqual([id]);
    expect(await call<Page>(client, 'list_styles', { ids: [id], model: 'wan' })).toEqual({ items: [], next_cursor: null });
    expect((await call<Page>(client, 'list_styles', { ids: [id], filter: 'user' })).items).toHaveLength(1);
    expect((await call<Page>(client, 'list_styles', { ids: [id], filter: 'shared' })).items).toHaveLength(0);
    const first = await call<Page>(client, 'list_styles', { limit: 1 });
    expect(first.items).toHaveLength(1);
    expect((await call<Page>(client, 'list_styles', { cursor: first.next_cursor })).items.map((s) => s.id)).not.toContain(first.items[0]!.id);
  });

  it("train_style without a wait answers the job queued, the same job for a repeated idempotency_key", async () => {
    const args = { name: 'Queued', urls: [await colourDataUri(10, 10, 200)], idempotency_key: 'mcp-train-1' };
    const job = await call<Job>(client, 'train_style', args);
    expect(job).toMatchObject({ type: 'loraTraining', status: 'queued' });
    expect(job).not.toHaveProperty('result');
    expect((await call<Job>(client, 'train_style', args)).job_id).toBe(job.job_id);
    expect((await jobWhenEnded<Job>(t, job.job_id)).status).toBe('completed');
  });

  it("another workspace's tools see none of its styles", async () => {
    const { id } = await trained('Private', [90, 90, 10]);
    expect(await call<Page>(other.client, 'list_styles')).toEqual({ items: [], next_cursor: null });
    expect(await call<Page>(other.client, 'list_styles', { ids: [id] })).toEqual({ items: [], next_cursor: null });
    const http = errorOf(await get(t, `/styles/${id}`, other.token), 404);
    expect((await callError(other.client, 'get_style', { style_id: id })).message).toBe(http);
  });

  it.each<[string, Json, RegExp]>([
    ['no training images', { name: 'Empty', urls: [] }, /urls/],
    ['no name', { urls: ['https://example.com/a.png'] }, /name/],
    ['learning_rate for qwen', { name: 'Q', model: 'qwen', urls: ['https://example.com/a.png'], learning_rate: 0.001 }, /learning_rate/],
    ['a loopback training image', { name: 'Loop', urls: ['http://127.0.0.1/a.png'] }, /urls\[0\]/],
    ['too many steps', { name: 'Long', urls: ['https://example.com/a.png'], max_train_steps: 5000 }, /max_train_steps/],
  ])('train_style refuses %s with the message POST /styles/train gives, naming the field', async (_what, body, field) => {
    const http = errorOf(await createJob(t, 'loraTraining', body), 400);
    expect(http).toMatch(field);
    expect((await callError(client, 'train_style', body)).message).toBe(http);
  });

  it('train_style names webhook_url when the webhook URL is refused', async () => {
    const { message } = await callError(client, 'train_style', { name: 'Hook', urls: ['https://example.com/a.png'], webhook_url: 'ftp://example.com/x' });
    expect(message).toMatch(/^webhook_url /);
  });
});
