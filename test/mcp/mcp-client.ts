import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ManualClock } from '../../src/lib/clock.js';
import type { TestApp } from '../helpers/app.js';

/** The app listening on loopback (MCP clients speak real HTTP); returns its /mcp URL. */
export async function listen(t: TestApp): Promise<URL> {
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return new URL('/mcp', base);
}

/** The SDK's own client over Streamable HTTP, with a bearer token (or none). */
export async function connect(url: URL, token: string | null): Promise<Client> {
  const client = new Client({ name: 'mediagen-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

export type Result = CallToolResult;

/** A tool's structured content, failing with its error text if it failed. */
export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const res = (await client.callTool({ name, arguments: args })) as Result;
  if (res.isError) throw new Error(`${name} failed: ${res.content.map((c) => (c.type === 'text' ? c.text : c.type)).join(' | ')}`);
  return res.structuredContent as T;
}

/** A tool call that must fail: its first text (the HTTP API's `error`) and the JSON details after it, if any. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ message: string; details?: Record<string, unknown> }> {
  const res = (await client.callTool({ name, arguments: args })) as Result;
  if (!res.isError) throw new Error(`${name} succeeded: ${JSON.stringify(res.structuredContent)}`);
  const [first, second] = res.content;
  if (first?.type !== 'text') throw new Error(`${name}: no error text`);
  return { message: first.text, ...(second?.type === 'text' ? { details: JSON.parse(second.text) as Record<string, unknown> } : {}) };
}

/** Moves the clock on while `pending` is unsettled: the waits sleep on it, the worker runs in real time. */
export async function advancing<T>(clock: ManualClock, pending: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    await new Promise((r) => setTimeout(r, 10));
    clock.advance(stepMs);
  }
  return pending;
}
