import { isTerminal } from '../../../../src/client/index.js';
import type { Job, Mediagen, RequestOptions, components } from '../../../../src/client/index.js';

/** GET /jobs/{id}/details: the job with its request, status history and billing. */
export type JobDetails = components['schemas']['JobDetails'];
/** One webhook delivery of a job, with every attempt. */
export type WebhookDelivery = components['schemas']['WebhookDelivery'];

/** The job page's reads, in one place. */
export const jobDetails = (mg: Mediagen, id: string, opts?: RequestOptions): Promise<JobDetails> => mg.jobs.details(id, opts);

/** Deliveries read per page while looking for a job's. */
const SCAN_PAGE = 200;

/**
 * A job's webhook deliveries. The typed client has no call for GET /jobs/{id}/webhook-deliveries
 * yet, so they are found in the workspace's deliveries (`mg.webhooks.deliveries`, newest first by
 * the time each job ended): starting just after this job ended and stopping at the first delivery
 * older than the job itself, so only the deliveries of jobs that ended while it ran are read. A
 * job that has not ended has none yet (a delivery is written when its job ends).
 */
export async function jobDeliveries(mg: Mediagen, job: Pick<Job, 'job_id' | 'status' | 'created_at' | 'completed_at'>, opts: RequestOptions = {}): Promise<WebhookDelivery[]> {
  if (!isTerminal(job.status) || !job.completed_at) return [];
  const createdMs = Date.parse(job.created_at);
  // The cursor lists deliveries before a time: from a second past the job's end, which takes in its own.
  const found: WebhookDelivery[] = [];
  let cursor: string | null = new Date(Date.parse(job.completed_at) + 1000).toISOString();
  while (cursor) {
    const page = await mg.webhooks.deliveries({ limit: SCAN_PAGE, cursor, ...opts });
    for (const d of page.items) {
      if (Date.parse(d.created_at) < createdMs) return found;
      if (d.job_id === job.job_id) found.push(d);
    }
    cursor = page.next_cursor;
  }
  return found;
}
