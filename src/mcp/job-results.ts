import type { ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { contentTypeOf } from '../outputs/output-store.js';
import type { JobView } from '../services/common/job-view.js';
import { presentJob } from '../services/common/job-view.js';
import type { JobService } from '../services/jobs/jobs.js';
import type { McpDeps, ToolContext } from './tool.js';

/** The resource URI of a job: resources/read answers it with the job as get_job shows it. */
export const jobUri = (jobId: string): string => `mediagen://jobs/${jobId}`;

/** Each output URL with the name it is shown under: its role, its key, or its file name. */
function namedUrls(urls: NonNullable<JobView['result']>['urls']): [string, string][] {
  if (!urls) return [];
  if (!Array.isArray(urls)) return Object.entries(urls).map(([name, url]) => [name, url]);
  return urls.map((u) => (typeof u === 'string' ? [new URL(u).pathname.split('/').pop() ?? u, u] : [u.type, u.url]));
}

/**
 * A completed job's outputs as resource links, so a client can show or fetch each file (output
 * URLs need no token). A job still running shows its preview in `result`; only a completed
 * job's files are its outputs.
 */
export function outputLinks(job: JobView): ResourceLink[] {
  if (job.status !== 'completed') return [];
  return namedUrls(job.result?.urls).map(([name, uri]) => ({
    type: 'resource_link',
    uri,
    name,
    mimeType: contentTypeOf(new URL(uri).pathname),
    description: `Output of job ${job.job_id}`,
  }));
}

/** The caller's job as GET /jobs/{id} shows it, URLs under this server's public URL. */
export async function readJob(jobs: JobService, ctx: ToolContext, jobId: string): Promise<JobView> {
  return presentJob(await jobs.get(ctx.caller, jobId), ctx.publicUrl);
}

/**
 * The job once it reaches a terminal status, or as it is when `waitSeconds` have passed or the
 * client cancels: the job waits' service (services/jobs/job-waits.ts), which sleeps on the job's change
 * events with a backstop poll and holds no database connection. The status first read and each change go out as progress.
 */
export async function waitForEnd(deps: Pick<McpDeps, 'waits'>, ctx: ToolContext, jobId: string, waitSeconds: number): Promise<JobView> {
  let step = 0;
  const onChange = (job: JobView) => ctx.progress(++step, `job ${job.job_id} is ${job.status}`);
  const { job } = await deps.waits.waitForEnd(ctx.caller, jobId, waitSeconds * 1000, ctx.signal, onChange);
  return presentJob(job, ctx.publicUrl);
}
