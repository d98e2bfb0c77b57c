import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Log } from '../lib/log.js';
import type { AuthContext } from '../services/identity/identity.js';
import { PROMPTS } from './prompts.js';
import { RESOURCE_TEMPLATES, readResource } from './resources.js';
import type { McpDeps, ToolContext } from './tool.js';
import { TOOLS } from './tools/index.js';

/** Who is calling, where this server is, and where failures are logged: one HTTP request's worth. */
export interface McpCall {
  readonly caller: AuthContext;
  readonly publicUrl: string;
  readonly log: Log;
  /** The HTTP request's X-Request-Id: jobs the tools create keep it for their log lines. */
  readonly requestId?: string;
  /** Aborts when the server starts closing: a tool's wait then answers the job as it is, so it cannot hold a drain up. */
  readonly closing?: AbortSignal;
}

const INSTRUCTIONS =
  'mediagen generates images, videos, audio and 3D models as asynchronous jobs. list_models shows the models and prices; ' +
  'get_model_schema gives the input a model takes; generate creates a job (wait_seconds waits for it); get_job and list_jobs ' +
  'follow jobs; upload_asset stores a file whose URL can be an input; train_style trains a style (list_styles, get_style) that generate ' +
  "inputs take in `styles`; execute_node_app runs a published node app's graph as one job. Output URLs need no token. Completed jobs are charged.";

const TOOL_BY_NAME = new Map(TOOLS.map((t) => [t.definition.name, t]));
const PROMPT_BY_NAME = new Map(PROMPTS.map((p) => [p.definition.name, p]));

/**
 * The MCP server of one authenticated request: stateless, so it is built per request around its
 * caller and thrown away with it; nothing of a client is kept between requests, and any API process
 * answers any request. Built on the SDK's low-level Server, so the tools' JSON Schemas are the
 * services' own TypeBox views (the SDK's McpServer takes only zod schemas).
 */
export function createMcpServer(deps: McpDeps, call: McpCall): Server {
  const server = new Server(
    { name: 'mediagen', title: 'mediagen', version: 'v1' },
    { capabilities: { tools: {}, prompts: {}, resources: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map((t) => t.definition) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = TOOL_BY_NAME.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name}'; tools/list names every tool`);
    const progressToken = request.params._meta?.progressToken;
    const ctx: ToolContext = {
      ...call,
      signal: call.closing ? AbortSignal.any([extra.signal, call.closing]) : extra.signal,
      progress: async (progress, message) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch(() => undefined);
      },
    };
    return tool.call(deps, request.params.arguments, ctx);
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS.map((p) => p.definition) }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const prompt = PROMPT_BY_NAME.get(request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `unknown prompt '${request.params.name}'; prompts/list names every prompt`);
    return prompt.messages(request.params.arguments ?? {});
  });

  // Jobs are read by URI; they are too many to list, so the list is empty and the template names them.
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(deps, request.params.uri, { ...call, signal: extra.signal, progress: async () => undefined }),
  );
  return server;
}
