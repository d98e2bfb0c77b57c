import { formatMicros, formatMicrosOrNull } from '../lib/time.js';
import { resolveUrl } from '../lib/urls.js';
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
    completed_at: formatMicrosOrNull(job.completedAt),
    result: job.result,
    ...(job.error ? { error: job.error } : {}),
  };
}

/**
 * The store keeps output URL paths (`/outputs/<key>/<name>`), not absolute URLs, so a job written
 * by a worker on another machine, or before the public URL changed, is shown at this server's
 * public URL. They resolve under it, path prefix included (https://host/api/outputs/...). The API
 * and the webhook payload both show jobs this way.
 */
export function presentJob(view: JobView, publicUrl: string): JobView {
  const urls = view.result?.urls;
  if (!Array.isArray(urls)) return view;
  return { ...view, result: { ...view.result, urls: urls.map((u: string) => resolveUrl(u.replace(/^\/+/, ''), publicUrl)) } };
}
