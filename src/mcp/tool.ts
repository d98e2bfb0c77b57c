import type { Static, TObject } from '@sinclair/typebox';
import type { CallToolResult, ResourceLink, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../domain/error-catalogue.js';
import { infraFault } from '../lib/infra-fault.js';
import type { Log } from '../lib/log.js';
import { bodyValidator } from '../models/validation.js';
import type { BodyValidator } from '../models/validation.js';
import type { AuthContext } from '../services/identity/identity.js';
import type { Services } from '../services/services.js';
import { storageUnavailable } from '../services/upkeep/readiness.js';

/** The use cases the tools call: the same ones the HTTP routes call, never HTTP itself. */
export interface McpDeps
  extends Pick<Services, 'generation' | 'jobs' | 'waits' | 'models' | 'quotes' | 'assets' | 'billing' | 'styles' | 'nodeAppExecution' | 'readiness' | 'catalog' | 'clock'> {
  /** `--allow-private-urls`: literal private URLs in bodies, and upload_asset's fetch, allowed. */
  readonly allowPrivateUrls: boolean;
  /** upload_asset's URL fetch: its whole time limit (`input_timeout_ms`). */
  readonly fetchTimeoutMs: number;
}

/** One tools/call: who calls, where this server is, and the request's own abort and progress. */
export interface ToolContext {
  readonly caller: AuthContext;
  /** The base URL clients reach this server at: output, asset and migration URLs are under it. */
  readonly publicUrl: string;
  /** Aborts when the client cancels the call or goes away. */
  readonly signal: AbortSignal;
  readonly log: Log;
  /** The transport's request id (X-Request-Id of the POST /mcp), kept with the jobs a tool creates. */
  readonly requestId?: string;
  /** A progress notification, sent only when the client asked for progress on this call. */
  progress(progress: number, message: string): Promise<void>;
}

/** What a tool returns: its structured content, and resource links to what it made. */
export interface ToolOutput<O> {
  readonly structured: O;
  readonly links?: readonly ResourceLink[];
}

/**
 * One MCP tool: a name, what it does in words for the model, JSON Schemas for its arguments and
 * its structured result, and the use case it calls. A tool is one module exporting one of these,
 * listed once in tools/index.ts.
 */
export interface McpTool {
  readonly definition: Tool;
  call(deps: McpDeps, args: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

export interface ToolSpec<I extends TObject, O extends TObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations?: ToolAnnotations;
  run(deps: McpDeps, input: Static<I>, ctx: ToolContext): Promise<ToolOutput<Static<O>>>;
}

/**
 * A schema as a client receives it: plain JSON (TypeBox's symbol keys dropped) without `$id`s, so a
 * client compiling every tool's schemas into one validator never meets the same id twice.
 */
export function plainSchema(schema: object): Tool['inputSchema'] {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === '$id' ? undefined : value)) as Tool['inputSchema'];
}

export function defineTool<I extends TObject, O extends TObject>(spec: ToolSpec<I, O>): McpTool {
  // The arguments go through the same strict Ajv as request bodies: the same sentences for the
  // same faults, defaults filled in. Compiled on the first call, shared by every server.
  const validate: BodyValidator = bodyValidator(spec.input);
  return {
    definition: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: plainSchema(spec.input),
      outputSchema: plainSchema(spec.output) as Tool['outputSchema'],
      ...(spec.annotations ? { annotations: { title: spec.title, ...spec.annotations } } : {}),
    },
    async call(deps, args, ctx) {
      try {
        const input: unknown = structuredClone(args ?? {});
        validate(input);
        const out = await spec.run(deps, input as Static<I>, ctx);
        return toolResult(out.structured as Record<string, unknown>, out.links);
      } catch (err) {
        return toolError(asDomainError(err, ctx.log, spec.name));
      }
    },
  };
}

/** Structured content, its JSON as text for clients that read only text, and the links. */
export function toolResult(structured: Record<string, unknown>, links: readonly ResourceLink[] = []): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }, ...links] };
}

/**
 * A refusal as a tool error: first the message the HTTP API's `error` gives, then, when the HTTP
 * answer carries more (the 410's replacement and migration link, the 402's explanation,
 * Retry-After), those as JSON. No structured content: a client validates that against the
 * tool's output schema, which describes success.
 */
export function toolError(err: DomainError): CallToolResult {
  const more = {
    code: err.code,
    ...err.details.fields,
    ...(err.details.retryAfterSeconds !== undefined ? { retry_after_seconds: err.details.retryAfterSeconds } : {}),
  };
  const detail = Object.keys(more).length > 1 ? [{ type: 'text' as const, text: JSON.stringify(more) }] : [];
  return { isError: true, content: [{ type: 'text', text: err.message }, ...detail] };
}

/**
 * Anything thrown, as the HTTP error handler would answer it: a store or disk failing is the
 * server's passing trouble (503 with a retry); anything else is a bug, logged, and told as such.
 */
function asDomainError(err: unknown, log: Log, tool: string): DomainError {
  if (err instanceof DomainError) return err;
  const fault = infraFault(err);
  if (fault) return storageUnavailable(fault.kind, 'answer this request');
  const e = err as { message?: unknown; stack?: unknown };
  log.error({ tool, err: { message: String(e?.message ?? err), stack: e?.stack } }, 'MCP tool failed');
  return new DomainError('internal', 'internal server error');
}
