import type { ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal } from '../domain/states.js';
import { contentTypeOf } from '../outputs/output-store.js';
import type { JobView } from '../services/job-view.js';
import { presentJob } from '../services/job-view.js';
import type { JobService } from '../services/jobs.js';
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

/** First poll after this long, then each wait half as long again, up to the longest. */
const FIRST_POLL_MS = 250;
const LONGEST_POLL_MS = 2000;

/**
 * The job once it reaches a terminal status, or as it is when `waitSeconds` have passed. Each
 * poll is one short read, so a waiting call holds no database connection; the waits go through
 * the injected clock and end early when the client cancels. Status changes go out as progress.
 */
export async function waitForEnd(deps: Pick<McpDeps, 'jobs' | 'clock'>, ctx: ToolContext, jobId: string, waitSeconds: number): Promise<JobView> {
  const deadline = deps.clock.nowMs() + waitSeconds * 1000;
  let job = await readJob(deps.jobs, ctx, jobId);
  let pollMs = FIRST_POLL_MS;
  let step = 0;
  while (!isTerminal(job.status)) {
    const left = deadline - deps.clock.nowMs();
    if (left <= 0 || ctx.signal.aborted) break;
    try {
      await deps.clock.sleep(Math.min(pollMs, left), ctx.signal);
    } catch {
      break; // cancelled: answer with what is known (the client may no longer read it)
    }
    pollMs = Math.min(LONGEST_POLL_MS, Math.round(pollMs * 1.5));
    const before = job.status;
    job = await readJob(deps.jobs, ctx, jobId);
    if (job.status !== before) await ctx.progress(++step, `job ${job.job_id} is ${job.status}`);
  }
  return job;
}
