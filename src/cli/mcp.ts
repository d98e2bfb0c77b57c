import { parseArgs } from 'node:util';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, isInitializeRequest, isJSONRPCRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TOKEN_ENVS, MCP_URL_ENV, mcpClientSettings } from '../config/mcp-client.js';
import type { McpClientSettings } from '../config/mcp-client.js';

export const MCP_HELP = `Usage: mediagen mcp --url URL [--token TOKEN]

Serves mediagen's MCP tools over stdio, for assistants that launch a local command:
every message is passed to the server's Streamable HTTP endpoint (URL/mcp) with the
API token, so the tools, prompts and resources are exactly the server's (docs/mcp.md).

Options:
  --url URL        the mediagen server, e.g. http://localhost:8080 (env ${MCP_URL_ENV})
  --token TOKEN    an API token (env ${MCP_TOKEN_ENVS.join(', else ')}; prefer a
                   variable: a flag shows in the process list)
  -h, --help       show this help
`;

/** A failed POST as one line for the client: the server's `{"error": ...}` when it sent one; never the token. */
export function describeFailure(err: unknown, endpoint: URL): string {
  if (err instanceof StreamableHTTPError) {
    const body = /\{.*\}$/s.exec(err.message)?.[0];
    let said: string | undefined;
    try {
      said = body ? (JSON.parse(body) as { error?: unknown }).error as string | undefined : undefined;
    } catch {
      said = undefined;
    }
    return `the mediagen server at ${endpoint.origin} answered HTTP ${err.code ?? '?'}${typeof said === 'string' ? `: ${said}` : ''}`;
  }
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return `cannot reach the mediagen server at ${endpoint.origin}${typeof cause === 'string' ? ` (${cause})` : ''}`;
}

/**
 * The bridge: messages from stdin go to the server by POST, its answers come back on stdout.
 * Nothing is interpreted but `initialize`, whose negotiated protocol version later requests
 * carry, and failures: a request the server cannot take gets a JSON-RPC error of its own, so the
 * client is never left waiting. Resolves when stdin closes.
 */
export async function bridge(settings: McpClientSettings, warn: (line: string) => void): Promise<void> {
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(settings.endpoint, {
    requestInit: { headers: { authorization: `Bearer ${settings.token}` } },
  });
  const initializing = new Set<RequestId>();
  const closed = new Promise<void>((resolve) => (local.onclose = resolve));

  local.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) initializing.add(message.id);
    remote.send(message).catch((err: unknown) => {
      const text = describeFailure(err, settings.endpoint);
      if (isJSONRPCRequest(message)) {
        initializing.delete(message.id);
        void local.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InternalError, message: text } }).catch(() => undefined);
      } else warn(text);
    });
  };
  local.onerror = (err) => warn(`stdin: ${err.message}`);
  remote.onmessage = (message) => {
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') remote.setProtocolVersion(version);
    }
    void local.send(message).catch(() => undefined);
  };
  remote.onerror = (err) => warn(describeFailure(err, settings.endpoint));

  await remote.start();
  await local.start();
  // The SDK's stdio transport does not notice the end of its input; the client closing stdin is
  // how a desktop assistant stops the command.
  process.stdin.once('end', () => void local.close());
  await closed;
  await remote.close();
}

export async function mcp(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { url: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(MCP_HELP);
    return;
  }
  const settings = mcpClientSettings(values);
  // stdout carries the protocol: anything for a person goes to stderr.
  await bridge(settings, (line) => process.stderr.write(`mediagen mcp: ${line}\n`));
}
