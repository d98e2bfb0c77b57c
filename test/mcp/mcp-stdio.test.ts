import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mcpClientSettings } from '../../src/config/mcp-client.js';
import { createTestApp, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { BIN, childEnv, cleanup, run } from '../e2e/binary.js';
import { B1, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

/**
 * `mediagen mcp`: the built binary, launched by the SDK's StdioClientTransport as a desktop
 * assistant would, bridging stdio to a running server's /mcp with the API token.
 */

let t: TestApp;
let base: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await createTestApp();
  base = (await listen(t)).origin;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await cleanup();
});
afterAll(() => t.close());

/** Keeps the protocol revision the client negotiated (the SDK tells a transport that can use it). */
class RecordingTransport extends StdioClientTransport {
  protocolVersion: string | undefined;
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
}

/** The SDK client over stdio to `mediagen mcp ...args`; the token by environment unless `token` is null. */
async function stdio(args: string[], token: string | null = t.token): Promise<{ client: Client; transport: RecordingTransport; stderr: () => string }> {
  const env = Object.fromEntries(Object.entries(childEnv(token === null ? {} : { MEDIAGEN_API_TOKEN: token })).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const transport = new RecordingTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'desktop-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

describe('mediagen mcp over stdio', () => {
  it('serves the same tools as the HTTP endpoint, at the same protocol revision', async () => {
    // The revision each POST to the server carries once initialized.
    const versions: (string | undefined)[] = [];
    const record = (req: { method?: string; headers: Record<string, string | string[] | undefined> }) => {
      if (req.method === 'POST') versions.push(req.headers['mcp-protocol-version'] as string | undefined);
    };
    t.app.server.on('request', record);
    const { client, transport } = await stdio(['--url', base]);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    await client.listTools();
    t.app.server.off('request', record);
    // initialize goes without one; initialized and tools/list carry the negotiated one.
    expect(versions).toEqual([undefined, LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION]);
    const http = await connect(new URL('/mcp', base), t.token);
    clients.push(http);
    expect(await client.listTools()).toEqual(await http.listTools());
    expect(await client.listPrompts()).toEqual(await http.listPrompts());
    expect(client.getServerVersion()).toMatchObject({ name: 'mediagen' });
    expect(client.getInstructions()).toBe(http.getInstructions());
  });

  it("calls tools in the token's workspace: a job created over stdio is the server's", async () => {
    const { client } = await stdio(['--url', `${base}/`]);
    const job = await call<{ job_id: string }>(client, 'generate', { model: B1, input: MINIMAL[B1] });
    expect((await get(t, `/jobs/${job.job_id}`)).json()).toMatchObject({ job_id: job.job_id, status: 'queued' });
    expect(await call(client, 'get_job', { job_id: job.job_id })).toEqual((await get(t, `/jobs/${job.job_id}`)).json());
    expect((await callError(client, 'generate', { model: 'image/vendor-g/model-g-3', input: {} })).details).toMatchObject({ code: 'model_unavailable' });
  });

  it('takes the token from --token too, and the /mcp endpoint itself as --url', async () => {
    const { client } = await stdio(['--url', `${base}/mcp`, '--token', t.token], null);
    expect((await call<{ items: unknown[] }>(client, 'list_models')).items.length).toBeGreaterThan(0);
  });

  it("answers a refused token with the server's 401 message as a JSON-RPC error, never echoing the token", async () => {
    const secret = 'mg_not_a_real_token_5f2c';
    const err = await stdio(['--url', base], secret).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/the mediagen server at http:\/\/127\.0\.0\.1:\d+ answered HTTP 401: invalid API token/);
    expect(err?.message).not.toContain(secret);
  });

  it('says so when the server cannot be reached', async () => {
    const err = await stdio(['--url', 'http://127.0.0.1:9']).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/cannot reach the mediagen server at http:\/\/127\.0\.0\.1:9/);
  });

  it('answers line by line, and exits 0 soon after its stdin closes', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--url', base], { env: childEnv({ MEDIAGEN_API_TOKEN: t.token }), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = createInterface({ input: child.stdout });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
    const [line] = (await once(lines, 'line')) as [string];
    expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: expect.any(Array) } });
    const closedAt = Date.now();
    child.stdin.end();
    expect(await exited).toBe(0);
    // Not a speed measure: a bridge that left its connection to the server open would live on
    // until its pool let the connection go, which undici does at the server's keep-alive hint
    // (72 s here, checked below) less a second. A clean exit has taken up to 5 s on a loaded machine.
    expect(Date.now() - closedAt).toBeLessThan(30_000);
    const hint = (await fetch(new URL('/healthz', base))).headers.get('keep-alive');
    expect(Number(/timeout=(\d+)/.exec(hint ?? '')?.[1])).toBeGreaterThanOrEqual(60);
  });

  it('refuses to start without a URL or a token, in one line, exit 1', async () => {
    const noUrl = await run(['mcp']);
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toBe("mediagen: give the mediagen server's URL with --url or MEDIAGEN_URL\n");
    const noToken = await run(['mcp', '--url', base]);
    expect(noToken.stderr).toBe('mediagen: give an API token with --token or MEDIAGEN_TOKEN\n');
    const help = await run(['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: mediagen mcp --url URL/);
    expect((await run(['--help'])).stdout).toContain('Usage: mediagen mcp');
  });
});

describe('mcp client settings', () => {
  it.each([
    ['http://localhost:8080', 'http://localhost:8080/mcp'],
    ['http://localhost:8080/', 'http://localhost:8080/mcp'],
    ['https://media.example/api', 'https://media.example/api/mcp'],
    ['https://media.example/api/mcp', 'https://media.example/api/mcp'],
    ['https://media.example/api/?x=1#y', 'https://media.example/api/mcp'],
  ])('%s reaches the endpoint %s', (url, endpoint) => {
    expect(mcpClientSettings({ url, token: 'tok' }, {}).endpoint.href).toBe(endpoint);
  });

  it('reads MEDIAGEN_URL and MEDIAGEN_TOKEN, then MEDIAGEN_API_TOKEN, when no flag is given; flags win', () => {
    const env = { MEDIAGEN_URL: 'http://a.example', MEDIAGEN_API_TOKEN: 'from-env' };
    expect(mcpClientSettings({}, env)).toEqual({ endpoint: new URL('http://a.example/mcp'), token: 'from-env' });
    expect(mcpClientSettings({ url: 'http://b.example', token: 'flag' }, env)).toEqual({ endpoint: new URL('http://b.example/mcp'), token: 'flag' });
    // As the client commands: MEDIAGEN_TOKEN first, an empty one skipped.
    expect(mcpClientSettings({}, { ...env, MEDIAGEN_TOKEN: 'tok-a' }).token).toBe('tok-a');
    expect(mcpClientSettings({}, { ...env, MEDIAGEN_TOKEN: '' }).token).toBe('from-env');
    expect(() => mcpClientSettings({}, { MEDIAGEN_URL: 'http://a.example', MEDIAGEN_TOKEN: '' })).toThrow('give an API token with --token or MEDIAGEN_TOKEN');
  });

  it.each([
    ['ftp://a.example', /must be an http\(s\) URL/],
    ['not a url', /must be an absolute http\(s\) URL/],
    ['http://user:pw@a.example', /must not carry credentials/],
  ])('refuses --url %s', (url, message) => {
    expect(() => mcpClientSettings({ url, token: 'tok' }, {})).toThrow(message);
  });
});
