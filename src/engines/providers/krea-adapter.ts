/**
 * The `krea` provider type: the original API this server's spec describes (https://api.krea.ai), or
 * another mediagen. Same paths, bodies and job shape as this server's own:
 * - docs/spec (the job of section 2.1, its result 2.2 and error 2.3, the statuses of section 3,
 *   POST /generate/{path}, GET /jobs/{id}, DELETE /jobs/{id} of section 4, Bearer auth of section 5);
 * - this repository's routes and views: src/http/routes/generate-routes.ts, jobs-routes.ts,
 *   job-details-routes.ts, src/services/common/job-view.ts (Job, CreatedJob), and
 *   src/http/request/request-headers.ts (the Idempotency-Key header, 1 to 255 printable ASCII).
 *
 * Submit is `POST <upstream.model>` with the input as the JSON body and `Idempotency-Key: <our job
 * id>`: a submission repeated after a lost answer (a crash between the POST and storing the handle)
 * gets the same upstream job back from a mediagen, within its idempotency window (24 h by default),
 * instead of a second job. Status is `GET /jobs/{id}`; cancel is `DELETE /jobs/{id}` (it also removes
 * the upstream job and its files; a job already gone is not an error). No webhooks, no file API:
 * media go in the body as data: URIs.
 *
 * Usage: a completed job's cost, when the upstream tells it: `cost_usd` on the job if present, else
 * mediagen's `GET /jobs/{id}/details` (`cost_usd`, `price_usd`; owner and admin tokens only). That
 * extra read is best effort: an upstream without it (the original API: 404) or a member's token
 * (403) simply reports no usage.
 */
import type { AdapterFactory, ProviderAdapter, ProviderHttp, SubmitRequest, Submitted, UpstreamHandle, UpstreamStatus, UpstreamUsage } from './provider-port.js';
import { UpstreamError, cleanUpstreamMessage } from '../upstream/upstream-error.js';

export const KREA_DEFAULT_BASE_URL = 'https://api.krea.ai';

/**
 * Where a job's files are (spec 2.2): `result.urls` as an array of URL strings (images, video), or
 * of `{type, url}` objects (3D: model and preview). The third shape, `{name: url}` (node apps), is
 * read by naming its keys in the binding's `outputs` (`result.urls.<name>`).
 */
export const KREA_DEFAULT_OUTPUTS = ['result.urls', 'result.urls[*].url'] as const;

/** Spec section 3's statuses, as the engine acts on them. */
const STATUS_MAP: Readonly<Record<string, (job: Record<string, unknown>) => UpstreamStatus>> = {
  backlogged: () => ({ state: 'queued', raw: 'backlogged' }),
  queued: () => ({ state: 'queued', raw: 'queued' }),
  scheduled: () => ({ state: 'queued', raw: 'scheduled' }),
  processing: () => ({ state: 'running', raw: 'processing' }),
  sampling: () => ({ state: 'running', raw: 'sampling', sampling: true }),
  'intermediate-complete': () => ({ state: 'running', raw: 'intermediate-complete', sampling: true }),
  completed: (job) => ({ state: 'succeeded', raw: 'completed', output: job }),
  failed: (job) => ({ state: 'failed', raw: 'failed', message: failureOf(job) }),
  cancelled: () => ({ state: 'cancelled', raw: 'cancelled' }),
};

/**
 * The path to POST to for `upstream.model`: a path as given (`/generate/image/vendor-b/model-b-1`),
 * `generate/...` with its slash, and a bare model path (`image/vendor-b/model-b-1`, what our own
 * catalog calls a model) under `/generate/`.
 */
export function kreaPath(model: string): string {
  const m = model.trim();
  if (m.startsWith('/')) return m;
  return m.startsWith('generate/') ? `/${m}` : `/generate/${m}`;
}

export const kreaAdapter: AdapterFactory = (_settings, http): ProviderAdapter => ({
  type: 'krea',
  defaultOutputs: KREA_DEFAULT_OUTPUTS,
  synchronous: false,
  // Idempotency-Key is our job id: a submission sent again is the same job there.
  deduplicates: true,

  async submit(req: SubmitRequest): Promise<Submitted> {
    const answer = await http.json('POST', kreaPath(req.model), req.input, { 'idempotency-key': req.jobId });
    const job = jobOf(answer);
    return { handle: { id: job.job_id as string }, status: await statusOf(http, job) };
  },

  async status(handle: UpstreamHandle): Promise<UpstreamStatus> {
    let answer: unknown;
    try {
      answer = await http.json('GET', jobPath(handle.id));
    } catch (err) {
      // The job is gone there (deleted by someone else, or past the upstream's retention).
      if (err instanceof UpstreamError && err.status === 404) return { state: 'failed', raw: 'not_found', message: 'the upstream job no longer exists (404)' };
      throw err;
    }
    const job = jobOf(answer);
    if (job.job_id !== handle.id) throw new UpstreamError('malformed', 'the upstream answered another job than the one asked for');
    return statusOf(http, job);
  },

  async cancel(handle: UpstreamHandle): Promise<void> {
    try {
      await http.json('DELETE', jobPath(handle.id));
    } catch (err) {
      if (err instanceof UpstreamError && err.status === 404) return;
      throw err;
    }
  },
});

const jobPath = (id: string) => `/jobs/${encodeURIComponent(id)}`;

/** A job as spec 2.1 shows it: `job_id` and a known `status` at least. */
function jobOf(answer: unknown): Record<string, unknown> {
  if (!isObject(answer) || typeof answer.job_id !== 'string' || answer.job_id === '') throw new UpstreamError('malformed', 'the answer is not a job: it has no job_id');
  if (typeof answer.status !== 'string' || !Object.hasOwn(STATUS_MAP, answer.status)) {
    throw new UpstreamError('malformed', `the job has an unknown status (${cleanUpstreamMessage(String(answer.status)).slice(0, 40)})`);
  }
  return answer;
}

async function statusOf(http: ProviderHttp, job: Record<string, unknown>): Promise<UpstreamStatus> {
  const status = STATUS_MAP[job.status as string]!(job);
  if (status.state !== 'succeeded') return status;
  if (!isObject(job.result) || job.result.urls === undefined) throw new UpstreamError('malformed', 'the completed job has no result.urls');
  const usage = costOf(job) ?? (await detailsCost(http, job.job_id as string));
  return usage ? { ...status, usage } : status;
}

/** `error.code` and `error.message` of a failed job (spec 2.3), for the client, cleaned of URLs and keys. */
function failureOf(job: Record<string, unknown>): string {
  const error = isObject(job.error) ? job.error : {};
  const code = typeof error.code === 'string' ? error.code : undefined;
  const message = typeof error.message === 'string' ? error.message : undefined;
  const text = code && message ? `${message} (${code})` : (message ?? code ?? 'the upstream job failed without a reason');
  return cleanUpstreamMessage(text);
}

function costOf(o: Record<string, unknown>): UpstreamUsage | undefined {
  const usage: Record<string, string> = {};
  for (const key of ['cost_usd', 'price_usd'] as const) {
    const v = o[key];
    if (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v)) usage[key] = v;
    else if (typeof v === 'number' && Number.isFinite(v)) usage[key] = String(v);
  }
  return usage.cost_usd !== undefined ? usage : undefined;
}

/** mediagen's job details (owner and admin): what the upstream charged. Best effort, see the header. */
async function detailsCost(http: ProviderHttp, id: string): Promise<UpstreamUsage | undefined> {
  try {
    const details = await http.json('GET', `${jobPath(id)}/details`);
    return isObject(details) ? costOf(details) : undefined;
  } catch (err) {
    if (err instanceof UpstreamError) return undefined;
    throw err;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
