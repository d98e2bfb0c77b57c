/**
 * `Mediagen`: the typed client of the mediagen API (docs/clients.md). Node 20+ and browsers alike:
 * plain fetch, FormData and Blob, nothing Node-only.
 */
import { Transport, newIdempotencyKey } from './http.js';
import type { Call, RetryOptions } from './http.js';
import { isTerminal } from './types.js';
import type {
  Asset,
  AssetListQuery,
  AssetPage,
  CreatedJob,
  DeletedAsset,
  DeletedJob,
  GenerateBody,
  Job,
  JobListQuery,
  JobPage,
  Model,
  ModelPath,
  UsageItem,
  UsagePage,
  UsageQuery,
} from './types.js';
import { waitForJob, watchJob } from './watch.js';
import type { WaitOptions, WatchOptions } from './watch.js';

export interface MediagenOptions {
  /** The server's base URL (with its path prefix, if any): `http://localhost:8080`. */
  readonly baseUrl: string;
  /** An API token (`mediagen admin token create`). `models.list` and `models.get` need none. */
  readonly token?: string;
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Retries of 429, 503 and network errors (docs/clients.md); `false` turns them off. */
  readonly retry?: RetryOptions | false;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
}

export interface GenerateOptions extends RequestOptions {
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
   * `Idempotency-Key`. Without one the client sends a key of its own, so that it may repeat the
   * POST after a network error without making a second job.
   */
  readonly idempotencyKey?: string;
  /** `X-Api-Zero-Data-Retention: 1`, for the models that offer it. */
  readonly zeroDataRetention?: boolean;
  /** With `wait`: called with the job at each change (the wait then follows the event stream). */
  readonly onUpdate?: (job: Job) => void;
}

export interface UploadOptions extends RequestOptions {
  readonly description?: string;
  /** The file name sent in the form (default `upload`); the type is known from the bytes. */
  readonly filename?: string;
  readonly idempotencyKey?: string;
}

/** The Prefer header's longest wait, in seconds. */
const MAX_PREFER_WAIT_S = 60;

/** A model path as a URL path: each segment percent-encoded, the slashes kept. */
const modelRoute = (model: string) => `/generate/${model.split('/').map(encodeURIComponent).join('/')}`;
const jobPath = (id: string) => `/jobs/${encodeURIComponent(id)}`;
const signalOf = (o?: RequestOptions) => o?.signal;

/** A creation answer (`completed_at` and `result` null) in the shape GET /jobs/{id} uses. */
function asJob(job: Job | CreatedJob): Job {
  const { completed_at, result, ...rest } = job;
  return { ...rest, ...(completed_at != null ? { completed_at } : {}), ...(result != null ? { result } : {}) } as Job;
}

/** Every item of a paged list, following `next_cursor` to the last page. */
async function* pages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

export class Jobs {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  async get(id: string, opts?: RequestOptions): Promise<Job> {
    return (await this.#t.json<Job>({ method: 'GET', path: jobPath(id), signal: signalOf(opts) })).body;
  }

  /** One page, newest first; pass its `next_cursor` as `cursor` for the next. */
  async list(query: JobListQuery & RequestOptions = {}): Promise<JobPage> {
    const { signal, types, ...rest } = query;
    const q: Call['query'] = { ...rest, types: typeof types === 'string' || types === undefined ? types : types.join(',') };
    return (await this.#t.json<JobPage>({ method: 'GET', path: '/jobs', query: q, signal })).body;
  }

  /** Every job matching `query`, newest first, across all pages (`limit` is the page size). */
  iterate(query: Omit<JobListQuery, 'cursor'> & RequestOptions = {}): AsyncGenerator<Job, void, undefined> {
    return pages((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }));
  }

  /** Deletes the job and its outputs (a job in progress is cancelled first). */
  async delete(id: string, opts?: RequestOptions): Promise<DeletedJob> {
    return (await this.#t.json<DeletedJob>({ method: 'DELETE', path: jobPath(id), signal: signalOf(opts) })).body;
  }

  /** Cancels the job and keeps its record; an ended job throws a 409 MediagenError with `jobStatus`. */
  async cancel(id: string, opts?: RequestOptions): Promise<Job> {
    return (await this.#t.json<Job>({ method: 'POST', path: `${jobPath(id)}/cancel`, signal: signalOf(opts) })).body;
  }

  /** The job at each change until it ends: the event stream, else polling (docs/clients.md). */
  watch(id: string, opts?: WatchOptions): AsyncGenerator<Job, void, undefined> {
    return watchJob(this.#t, id, opts);
  }

  /** The job once it has ended, or as it is when `timeoutSeconds` runs out. */
  wait(id: string, opts?: WaitOptions): Promise<Job> {
    return waitForJob(this.#t, id, opts);
  }
}

export class Assets {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Uploads one file (multipart/form-data); its URL can then be given in any URL field of a request. */
  async upload(file: Blob | Uint8Array | ArrayBuffer, opts: UploadOptions = {}): Promise<Asset> {
    const blob = file instanceof Blob ? file : new Blob([file instanceof ArrayBuffer ? file : copyBytes(file)]);
    const form = new FormData();
    if (opts.description !== undefined) form.append('description', opts.description);
    form.append('file', blob, opts.filename ?? 'upload');
    const key = opts.idempotencyKey ?? newIdempotencyKey();
    const call: Call = { method: 'POST', path: '/assets', form, headers: { 'idempotency-key': key }, ownKey: opts.idempotencyKey === undefined, signal: opts.signal };
    return (await this.#t.json<Asset>(call)).body;
  }

  async get(id: string, opts?: RequestOptions): Promise<Asset> {
    return (await this.#t.json<Asset>({ method: 'GET', path: `/assets/${encodeURIComponent(id)}`, signal: signalOf(opts) })).body;
  }

  async list(query: AssetListQuery & RequestOptions = {}): Promise<AssetPage> {
    const { signal, ...q } = query;
    return (await this.#t.json<AssetPage>({ method: 'GET', path: '/assets', query: q, signal })).body;
  }

  iterate(query: Omit<AssetListQuery, 'cursor'> & RequestOptions = {}): AsyncGenerator<Asset, void, undefined> {
    return pages((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }));
  }

  async delete(id: string, opts?: RequestOptions): Promise<DeletedAsset> {
    return (await this.#t.json<DeletedAsset>({ method: 'DELETE', path: `/assets/${encodeURIComponent(id)}`, signal: signalOf(opts) })).body;
  }
}

/** The bytes in an ArrayBuffer of their own (a Blob part may not be a view of a shared buffer). */
function copyBytes(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

export class Models {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** The catalog: every model, retired ones included (`available: false`). */
  async list(opts?: RequestOptions): Promise<Model[]> {
    return (await this.#t.json<{ items: Model[] }>({ method: 'GET', path: '/models', signal: signalOf(opts) })).body.items;
  }

  /** One model, with its request schema and price. */
  async get(id: string, opts?: RequestOptions): Promise<Model> {
    return (await this.#t.json<Model>({ method: 'GET', path: `/models/${encodeURIComponent(id)}`, signal: signalOf(opts) })).body;
  }
}

export class Mediagen {
  readonly jobs: Jobs;
  readonly assets: Assets;
  readonly models: Models;
  readonly #t: Transport;

  constructor(opts: MediagenOptions) {
    this.#t = new Transport(opts);
    this.jobs = new Jobs(this.#t);
    this.assets = new Assets(this.#t);
    this.models = new Models(this.#t);
  }

  /** The base URL requests go to. */
  get baseUrl(): string {
    return this.#t.baseUrl;
  }

  /**
   * Creates a job of `model` (`POST /generate/{model}`) and, with `wait`, waits for its end. The
   * job comes back as `GET /jobs/{id}` shows it (`completed_at` and `result` absent until set).
   */
  async generate<M extends ModelPath | (string & {})>(model: M, body: GenerateBody<M>, opts: GenerateOptions = {}): Promise<Job> {
    const waitS = opts.wait === true ? Infinity : typeof opts.wait === 'number' ? Math.max(0, opts.wait) : 0;
    const deadline = Date.now() + waitS * 1000;
    // With onUpdate the caller wants every change: the POST answers at once and the stream follows.
    const preferS = waitS > 0 && !opts.onUpdate ? Math.max(1, Math.min(MAX_PREFER_WAIT_S, Math.ceil(waitS))) : 0;
    const headers: Record<string, string> = { 'idempotency-key': opts.idempotencyKey ?? newIdempotencyKey() };
    if (opts.webhookUrl !== undefined) headers['x-webhook-url'] = opts.webhookUrl;
    if (opts.zeroDataRetention) headers['x-api-zero-data-retention'] = '1';
    if (preferS > 0) headers.prefer = `wait=${preferS}`;
    const { body: created } = await this.#t.json<Job | CreatedJob>({
      method: 'POST',
      path: modelRoute(model),
      json: body,
      headers,
      ownKey: opts.idempotencyKey === undefined,
      signal: opts.signal,
    });
    const job = asJob(created);
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
    return this.jobs.wait(job.job_id, {
      ...(Number.isFinite(remainingS) ? { timeoutSeconds: remainingS } : {}),
      signal: opts.signal,
      onUpdate,
    });
  }

  /** One page of the usage report: charged jobs in a time window, newest first. */
  async usage(query: UsageQuery & RequestOptions = {}): Promise<UsagePage> {
    const { signal, ...q } = query;
    return (await this.#t.json<UsagePage>({ method: 'GET', path: '/usage', query: q, signal })).body;
  }

  /** Every item of the usage report in the window, across all pages. */
  usageItems(query: Omit<UsageQuery, 'cursor'> & RequestOptions = {}): AsyncGenerator<UsageItem, void, undefined> {
    return pages((cursor) => this.usage({ ...query, ...(cursor ? { cursor } : {}) }));
  }
}
