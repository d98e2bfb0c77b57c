import { tmpdir } from 'node:os';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { B1, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

/** The MCP endpoint as a protocol: Streamable HTTP, stateless, behind the API's bearer tokens. */

const TOOLS = [
  'list_models',
  'get_model_schema',
  'quote_price',
  'generate',
  'get_job',
  'list_jobs',
  'delete_job',
  'upload_asset',
  'list_assets',
  'train_style',
  'list_styles',
  'get_style',
  'execute_node_app',
  'get_usage',
];

let t: TestApp;
let url: URL;
let client: Client;

beforeAll(async () => {
  t = await createTestApp();
  url = await listen(t);
  client = await connect(url, t.token);
});
afterAll(async () => {
  await client.close();
  await t.close();
});

const initialize = (headers: Record<string, string>) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    }),
  });

describe('initialize', () => {
  it('negotiates the SDK\'s latest protocol revision (2025-06-18 or newer) and names the server', () => {
    expect(LATEST_PROTOCOL_VERSION >= '2025-06-18').toBe(true);
    expect((client.transport as { protocolVersion?: string }).protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(client.getServerVersion()).toMatchObject({ name: 'mediagen' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {} });
    expect(client.getInstructions()).toContain('generate');
  });

  it('agrees to 2025-06-18 when a client asks for it, and sets no session id (stateless)', async () => {
    const res = await initialize({ authorization: `Bearer ${t.token}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    // An SSE answer says no-cache (the SDK's), a JSON one the API's no-store: never cached either way.
    expect(res.headers.get('cache-control')).toMatch(/no-store|no-cache/);
    const text = await res.text();
    const message = JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as { result: { protocolVersion: string } };
    expect(message.result.protocolVersion).toBe('2025-06-18');
  });

  it('answers any message without a prior initialize: no server-side session', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"list_models"');
  });
});

describe('authentication', () => {
  it.each([
    ['no Authorization header', {}, 'missing Authorization header; send Authorization: Bearer <API_TOKEN>'],
    ['an unknown token', { authorization: 'Bearer mg_nope' }, 'invalid API token'],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'malformed Authorization header; expected Bearer <API_TOKEN>'],
  ])('answers 401 with WWW-Authenticate: Bearer and a JSON error for %s', async (_what, headers, error) => {
    const res = await initialize(headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error });
  });

  it('makes the SDK client fail to connect with HTTP 401 when it has no token', async () => {
    const err = await connect(url, null).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
  });

  it('answers 403 for a workspace whose API access is off', async () => {
    const ws = await t.newWorkspace('closed');
    await t.services.identity.setWorkspace(ws.workspaceId, { apiAccess: false });
    const res = await initialize({ authorization: `Bearer ${ws.token}` });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/API access is disabled/);
  });

  it('answers 405 with Allow: POST to GET and DELETE, which mean nothing without sessions', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { authorization: `Bearer ${t.token}`, accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(typeof ((await res.json()) as { error: string }).error).toBe('string');
    }
  });
});

describe('tools/list', () => {
  it('lists every tool with a description, an object input schema and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      // Plain JSON Schemas: no component ids a client's validator would see twice.
      expect(JSON.stringify([tool.inputSchema, tool.outputSchema]), tool.name).not.toContain('"$id"');
    }
  });

  it('marks the read-only tools read-only and delete_job destructive', async () => {
    const byName = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    for (const name of ['list_models', 'get_model_schema', 'quote_price', 'get_job', 'list_jobs', 'list_assets', 'list_styles', 'get_style', 'get_usage']) {
      expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(true);
    }
    expect(byName.get('delete_job')!.annotations?.destructiveHint).toBe(true);
    for (const name of ['generate', 'train_style', 'execute_node_app']) expect(byName.get(name)!.annotations?.readOnlyHint, name).toBe(false);
  });

  it('refuses an unknown tool as a protocol error', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool 'no_such_tool'/);
  });

  it('refuses arguments its schema does not take, naming them', async () => {
    const res = await client.callTool({ name: 'list_jobs', arguments: { limit: 0 } });
    expect(res.isError).toBe(true);
    expect(res.content).toEqual([{ type: 'text', text: "'limit' must be >= 1" }]);
    const extra = await client.callTool({ name: 'get_job', arguments: { job_id: 'x', surprise: 1 } });
    expect(extra.content).toEqual([{ type: 'text', text: "unknown property 'surprise'" }]);
  });
});

describe('prompts and resources', () => {
  it('offers the image-then-video prompt, which names the tools to call', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['image_then_video']);
    const got = await client.getPrompt({ name: 'image_then_video', arguments: { subject: 'a lighthouse at dusk' } });
    const text = (got.messages[0]!.content as { text: string }).text;
    expect(text).toContain('a lighthouse at dusk');
    for (const tool of ['get_model_schema', 'generate', 'get_job']) expect(text).toContain(tool);
    await expect(client.getPrompt({ name: 'image_then_video', arguments: {} })).rejects.toThrow(/subject/);
  });

  it('names jobs by a resource template and reads one as get_job shows it', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['mediagen://jobs/{job_id}']);
    const job = await call<{ job_id: string }>(client, 'generate', { model: 'image/vendor-b/model-b-1', input: { prompt: 'a blue bird' } });
    const read = await client.readResource({ uri: `mediagen://jobs/${job.job_id}` });
    const shown = await call(client, 'get_job', { job_id: job.job_id });
    expect(read.contents).toEqual([{ uri: `mediagen://jobs/${job.job_id}`, mimeType: 'application/json', text: JSON.stringify(shown) }]);
    await expect(client.readResource({ uri: 'mediagen://jobs/123e4567-e89b-42d3-a456-426614174000' })).rejects.toThrow(/resource not found/);
  });
});

describe('while the data dir cannot take writes', () => {
  let full: TestApp;
  let fullClient: Client;
  beforeAll(async () => {
    full = await createTestApp({ storage: { dir: tmpdir(), minFreeBytes: Number.MAX_SAFE_INTEGER } });
    fullClient = await connect(await listen(full), full.token);
  });
  afterAll(async () => {
    await fullClient.close();
    await full.close();
  });

  it('still answers reads, and refuses generate and upload_asset with the 503 message of POST /generate and POST /assets', async () => {
    expect(await call(fullClient, 'list_jobs')).toEqual({ items: [], next_cursor: null });
    const http = await generate(full, B1, MINIMAL[B1]);
    expect(http.statusCode).toBe(503);
    expect(await callError(fullClient, 'generate', { model: B1, input: MINIMAL[B1] })).toEqual({
      message: errorOf(http, 503),
      details: { code: 'unavailable', retry_after_seconds: Number(http.headers['retry-after']) },
    });
    const upload = await callError(fullClient, 'upload_asset', { content_base64: 'aGk=' });
    expect(upload.message).toMatch(/^the server cannot store new uploads right now/);
  });
});
