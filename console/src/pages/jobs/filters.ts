import type { JobListQuery, JobStatus } from '../../../../packages/client/src/index.js';
import { FROM_AFTER_TO, localMidnight } from '../../lib/format.js';

/**
 * The jobs list's filters as they live in the page's URL (`jobs?status=failed&model=...&from=...&to=...`),
 * so a reload, a shared link and the back button keep them, and as GET /jobs's query.
 */

const ALL_STATUSES: Record<JobStatus, true> = {
  backlogged: true,
  queued: true,
  scheduled: true,
  processing: true,
  sampling: true,
  'intermediate-complete': true,
  completed: true,
  failed: true,
  cancelled: true,
};

/** Every status a job can have, in the order a job passes through them (docs/states.md). */
export const JOB_STATUSES = Object.keys(ALL_STATUSES) as JobStatus[];

const isStatus = (s: string | null): s is JobStatus => s !== null && Object.hasOwn(ALL_STATUSES, s);

export interface JobFilters {
  readonly status?: JobStatus | undefined;
  /** A model path (a job type), sent as `types`. */
  readonly model?: string | undefined;
  /** The first day shown, YYYY-MM-DD in the browser's time zone. */
  readonly from?: string | undefined;
  /** The last day shown (inclusive), YYYY-MM-DD in the browser's time zone. */
  readonly to?: string | undefined;
}

/** The filters a URL's query names; anything malformed is left out rather than sent. */
export function filtersFrom(query: URLSearchParams): JobFilters {
  const status = query.get('status');
  const model = query.get('model')?.trim();
  const from = query.get('from');
  const to = query.get('to');
  return {
    status: isStatus(status) ? status : undefined,
    model: model ? model : undefined,
    from: from && localMidnight(from) ? from : undefined,
    to: to && localMidnight(to) ? to : undefined,
  };
}

/** The console path of the jobs list with these filters. */
export function jobsPath(f: JobFilters): string {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.model) q.set('model', f.model);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  const s = q.toString();
  return s ? `jobs?${s}` : 'jobs';
}

export const hasFilters = (f: JobFilters) => Boolean(f.status || f.model || f.from || f.to);

/** Why the date range cannot be asked for, if it cannot. */
export function rangeProblem(f: JobFilters): string | undefined {
  if (f.from && f.to && f.from > f.to) return FROM_AFTER_TO;
  return undefined;
}

/**
 * GET /jobs's query for these filters: `start` at local 00:00 of `from` (inclusive) and `end` at
 * the local midnight after `to` (exclusive), as ISO date-times.
 */
export function listQuery(f: JobFilters): JobListQuery {
  const q: { status?: JobStatus; types?: string; start?: string; end?: string } = {};
  if (f.status) q.status = f.status;
  if (f.model) q.types = f.model;
  const start = f.from ? localMidnight(f.from) : undefined;
  const end = f.to ? localMidnight(f.to, 1) : undefined;
  if (start) q.start = start.toISOString();
  if (end) q.end = end.toISOString();
  return q;
}
