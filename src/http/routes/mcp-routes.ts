import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { HeldRequests } from '../request/held-requests.js';
import { createMcpServer } from '../../mcp/server.js';
import type { McpDeps } from '../../mcp/tool.js';
import { logFailure } from '../logging.js';
import { requireAuth } from '../plugins/auth.js';

/**
 * The largest file upload_asset takes inline (base64 in the JSON-RPC body): a JSON body is held
 * whole in memory, so bigger files go by `url` or POST /assets, which stream.
 */
export const MCP_INLINE_FILE_MAX_BYTES = 24 * 1024 * 1024;

export interface McpRouteDeps extends McpDeps {
  readonly publicUrl: () => string;
  /** Ends tool waits (generate's `wait_seconds`) when the server starts closing. */
  readonly held?: HeldRequests;
  /** The largest JSON body of a generation request (`body_limit_bytes`). */
  readonly bodyLimitBytes: number;
}

/** Room for a tool call's JSON beside an inline file: a generation body, or base64 of the largest inline file. */
export function mcpBodyLimit(bodyLimitBytes: number, assetMaxBytes: number): number {
  const inline = Math.min(assetMaxBytes, MCP_INLINE_FILE_MAX_BYTES);
  return bodyLimitBytes + Math.ceil(inline / 3) * 4;
}

/**
 * The MCP endpoint (Streamable HTTP, stateless): each POST gets a fresh server and transport for
 * its authenticated caller, answers as JSON or an SSE stream as the SDK chooses, and leaves
 * nothing behind, so any API process answers any request. The auth plugin has already answered
 * 401 (with WWW-Authenticate: Bearer) or 403 when the bearer token does not pass, and the body
 * went through the one JSON parser. GET (a standalone stream for server-sent messages) and DELETE
 * (ending a session) mean nothing without sessions: 405, as the transport spec allows.
 */
export function registerMcpRoute(app: FastifyInstance, deps: McpRouteDeps): void {
  app.post(
    '/mcp',
    {
      bodyLimit: mcpBodyLimit(deps.bodyLimitBytes, deps.assets.policy.maxBytes),
      config: { storesInside: true },
      schema: { hide: true },
    },
    async (request, reply) => {
      const caller = requireAuth(request.auth);
      const held = deps.held?.hold(reply);
      const server = createMcpServer(deps, { caller, publicUrl: deps.publicUrl(), log: request.log, requestId: request.id, ...(held ? { closing: held.signal } : {}) });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      // A client gone mid-call aborts what its call still waits for (generate's wait).
      reply.raw.once('close', () => {
        held?.release();
        void transport.close().catch(() => undefined);
        void server.close().catch(() => undefined);
      });
      // The SDK writes the raw response; the headers set so far (request id, no-store) go with it.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      reply.hijack();
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        logFailure(request.log, err, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'internal server error' }));
        } else reply.raw.end();
      }
    },
  );

  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    handler: (_request, reply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .type('application/json; charset=utf-8')
        .send({ error: 'this MCP endpoint is stateless: send each JSON-RPC message by POST; there are no sessions or server-initiated streams' }),
  });
}
