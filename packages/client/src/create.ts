/**
 * Creating a job and, if asked, waiting for its end: what `generate`, `styles.train` and
 * `nodeApps.execute` share (the same headers, retries and waits; only the route and the shape of
 * the answer differ).
 */
import { newIdempotencyKey } from './http.js';
import type { Transport } from './http.js';
import { isTerminal } from './types.js';
import type { CreatedJob, Job } from './types.js';
import { waitForJob } from './watch.js';

export interface RequestOptions {
  readonly signal?: AbortSignal;
}

/** The options of every call that creates a job. */
export interface CreateOptions extends RequestOptions {
  /**
   * `true`: return once the job has ended (completed, failed or cancelled). A number: wait at most
   * that many seconds, then return the job as it is. Absent or `false`: return the new job at once.
   * The first 60 seconds are waited in the POST itself (`Prefer: wait`); longer waits, and servers
   * that do not wait, continue with `jobs.wait`.
   */
  readonly wait?: boolean | number;
  /** `X-Webhook-URL`: receives a POST when the job ends. */
  readonly webhookUrl?: string;
  /**
   * `X-Mediagen-Tags`: up to 8 tags of 1 to 64 characters of a-z, 0-9, `_`, `.`, `:` and `-`, shown
   * on the job, filtered by `jobs.list({ tag })` and summed by `usageSummary({ group_by: 'tag' })`.
   * The server checks them (a bad one is a 400 MediagenError naming the header).
   */
  readonly tags?: readonly string[];
  /**
   * `Idempotency-Key`. Without one the client sends a key of its own, so that it may repeat the
   * POST after a network error without making a second job.
   */
  readonly idempotencyKey?: string;
  /** With `wait`: called with the job at each change (the wait then follows the event stream). */
  readonly onUpdate?: (job: Job) => void;
}

/** One job-creating POST: its path (already encoded), body, and any header of its own. */
export interface Creation {
  readonly path: string;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** The job in the answer's body (node-app execute answers an array of one). */
  readonly pick?: (body: unknown) => Job | CreatedJob;
}

/** The Prefer header's longest wait, in seconds. */
const MAX_PREFER_WAIT_S = 60;

/** A creation answer (`completed_at` and `result` null) in the shape GET /jobs/{id} uses. */
function asJob(job: Job | CreatedJob): Job {
  const { completed_at, result, ...rest } = job;
  return { ...rest, ...(completed_at != null ? { completed_at } : {}), ...(result != null ? { result } : {}) } as Job;
}

/** The one job of an answer holding an array of one (node-app execute). */
export function onlyJob(body: unknown): Job | CreatedJob {
  if (!Array.isArray(body) || body.length !== 1) throw new TypeError('the server answered no job: expected an array of one');
  return body[0] as Job | CreatedJob;
}

/**
 * POSTs `c` with the options' headers and, with `wait`, waits for the job's end. The job comes back
 * as `GET /jobs/{id}` shows it (`completed_at` and `result` absent until set).
 */
export async function createJob(t: Transport, c: Creation, opts: CreateOptions): Promise<Job> {
  const waitS = opts.wait === true ? Infinity : typeof opts.wait === 'number' ? Math.max(0, opts.wait) : 0;
  const deadline = Date.now() + waitS * 1000;
  // With onUpdate the caller wants every change: the POST answers at once and the stream follows.
  const preferS = waitS > 0 && !opts.onUpdate ? Math.max(1, Math.min(MAX_PREFER_WAIT_S, Math.ceil(waitS))) : 0;
  const headers: Record<string, string> = { ...c.headers, 'idempotency-key': opts.idempotencyKey ?? newIdempotencyKey() };
  if (opts.webhookUrl !== undefined) headers['x-webhook-url'] = opts.webhookUrl;
  // An empty list sends no header: a job without tags (an empty header would be refused).
  if (opts.tags !== undefined && opts.tags.length > 0) headers['x-mediagen-tags'] = opts.tags.join(',');
  if (preferS > 0) headers.prefer = `wait=${preferS}`;
  const answer = await t.json<unknown>({
    method: 'POST',
    path: c.path,
    json: c.body,
    headers,
    ownKey: opts.idempotencyKey === undefined,
    signal: opts.signal,
  });
  const job = asJob(c.pick ? c.pick(answer.body) : (answer.body as Job | CreatedJob));
  if (waitS === 0) return job;
  const report = opts.onUpdate;
  report?.(job);
  // The stream replays the job from its creation: its first status is the one just reported.
  let reported: string | undefined = job.status;
  const onUpdate = report && ((update: Job) => {
    const again = update.status === reported;
    reported = undefined;
    if (!again) report(update);
  });
  const remainingS = (deadline - Date.now()) / 1000;
  if (isTerminal(job.status) || remainingS <= 0) return job;
  // Whether or not the server applied the preference (Preference-Applied), what is left of the
  // wait follows the job's events.
  return waitForJob(t, job.job_id, {
    ...(Number.isFinite(remainingS) ? { timeoutSeconds: remainingS } : {}),
    signal: opts.signal,
    onUpdate,
  });
}
