import type { ReadResourceResult, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../domain/error-catalogue.js';
import { readJob } from './job-results.js';
import type { McpDeps, ToolContext } from './tool.js';

/**
 * Resources: a job by URI (`mediagen://jobs/{job_id}`), the job as get_job shows it, so a client
 * can attach a job to a conversation. Its outputs are plain URLs, given as resource links by
 * generate and get_job; a client fetches those itself (they need no token).
 */
export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  {
    uriTemplate: 'mediagen://jobs/{job_id}',
    name: 'job',
    title: 'A generation job',
    description: 'A job in its current status, with its result URLs once completed (as get_job shows it)',
    mimeType: 'application/json',
  },
];

const JOB_URI = /^mediagen:\/\/jobs\/([^/?#]+)$/;

export async function readResource(deps: McpDeps, uri: string, ctx: ToolContext): Promise<ReadResourceResult> {
  const id = JOB_URI.exec(uri)?.[1];
  // JSON-RPC's "resource not found" (MCP's -32002) for anything that names no job of the caller.
  const missing = () => new McpError(-32002, `resource not found: ${uri}`);
  if (id === undefined) throw missing();
  try {
    const job = await readJob(deps.jobs, ctx, decodeURIComponent(id));
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(job) }] };
  } catch (err) {
    if ((err instanceof DomainError && err.code === 'not_found') || err instanceof URIError) throw missing();
    if (err instanceof DomainError) throw new McpError(ErrorCode.InvalidRequest, err.message);
    throw err;
  }
}
