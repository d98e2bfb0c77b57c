import { formatMicros } from '../lib/time.js';
import type { JobRecord } from '../store/store.js';

/** A job as the API shows it (spec 2.1), plus `type`, its model path. */
export interface JobView {
  job_id: string;
  type: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  result: Readonly<Record<string, unknown>> | null;
  error?: Readonly<{ code: string; message?: string }>;
}

export function toJobView(job: JobRecord): JobView {
  return {
    job_id: job.id,
    type: job.type,
    status: job.status,
    created_at: formatMicros(job.createdAt),
    completed_at: job.completedAt === null ? null : formatMicros(job.completedAt),
    result: job.result,
    ...(job.error ? { error: job.error } : {}),
  };
}
