import { isTerminal } from '../../../../packages/client/src/index.js';
import type { Job, Mediagen, RequestOptions, components } from '../../../../packages/client/src/index.js';

/** GET /jobs/{id}/details: the job with its request, status history and billing. */
export type JobDetails = components['schemas']['JobDetails'];
/** One webhook delivery of a job, with every attempt. */
export type WebhookDelivery = components['schemas']['WebhookDelivery'];

/** The job page's reads, in one place. */
export const jobDetails = (mg: Mediagen, id: string, opts?: RequestOptions): Promise<JobDetails> => mg.jobs.details(id, opts);

/**
 * A job's webhook deliveries (GET /jobs/{id}/webhook-deliveries). A job that has not ended has none
 * yet (a delivery is written when its job ends), so it is not asked.
 */
export async function jobDeliveries(mg: Mediagen, job: Pick<Job, 'job_id' | 'status'>, opts: RequestOptions = {}): Promise<WebhookDelivery[]> {
  if (!isTerminal(job.status)) return [];
  return mg.jobs.webhookDeliveries(job.job_id, opts);
}
