/**
 * `Mediagen`: the typed client of the mediagen API (docs/clients.md). Node 20+ and browsers alike:
 * plain fetch, FormData and Blob, nothing Node-only.
 */
import { createJob, onlyJob } from './create.js';
import type { CreateOptions, RequestOptions } from './create.js';
import { Transport, newIdempotencyKey } from './http.js';
import type { Call, RetryOptions } from './http.js';
import type {
  Asset,
  AssetListQuery,
  AssetPage,
  DeletedAsset,
  DeletedJob,
  GenerateBody,
  Job,
  JobDetails,
  JobListQuery,
  JobPage,
  Model,
  ModelPath,
  NodeAppInputs,
  PriceQuote,
  QuoteBody,
  StyleTrainingRequest,
  UsageItem,
  UsagePage,
  WebhookDelivery,
  UsageQuery,
  UsageSummary,
  UsageSummaryQuery,
} from './types.js';
import { pages } from './pages.js';
import { waitForJob, watchJob } from './watch.js';
import { Tokens, Webhooks, WorkspaceApi } from './workspace-api.js';

export type { CreateOptions, RequestOptions } from './create.js';
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

export interface GenerateOptions extends CreateOptions {
  /** `X-Api-Zero-Data-Retention: 1`, for the models that offer it. */
  readonly zeroDataRetention?: boolean;
}

export interface UploadOptions extends RequestOptions {
  readonly description?: string;
  /** The file name sent in the form (default `upload`); the type is known from the bytes. */
  readonly filename?: string;
  readonly idempotencyKey?: string;
}

/** A model path as a URL path: each segment percent-encoded, the slashes kept. */
const modelRoute = (model: string) => `/generate/${model.split('/').map(encodeURIComponent).join('/')}`;
const jobPath = (id: string) => `/jobs/${encodeURIComponent(id)}`;
const signalOf = (o?: RequestOptions) => o?.signal;

export class Jobs {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  async get(id: string, opts?: RequestOptions): Promise<Job> {
    return (await this.#t.json<Job>({ method: 'GET', path: jobPath(id), signal: signalOf(opts) })).body;
  }

  /** The job with its stored request, status history (`timeline`) and billing (price, cost). */
  async details(id: string, opts?: RequestOptions): Promise<JobDetails> {
    return (await this.#t.json<JobDetails>({ method: 'GET', path: `${jobPath(id)}/details`, signal: signalOf(opts) })).body;
  }

  /** What happened to the job's webhook: each delivery (one per terminal status reached) and every attempt. */
  async webhookDeliveries(id: string, opts?: RequestOptions): Promise<WebhookDelivery[]> {
    return (await this.#t.json<{ items: WebhookDelivery[] }>({ method: 'GET', path: `${jobPath(id)}/webhook-deliveries`, signal: signalOf(opts) })).body.items;
  }

  /** One page, newest first; pass its `next_cursor` as `cursor` for the next. `start`/`end` bound the creation time. */
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

  /**
   * What `body` would cost with `model` (checked as its creation checks it), without creating a
   * job: the price its job would hold. Needs a token.
   */
  async quote<M extends ModelPath | (string & {})>(model: M, body: QuoteBody<M>, opts?: RequestOptions): Promise<PriceQuote> {
    const path = `/models/${encodeURIComponent(model)}/quote`;
    return (await this.#t.json<PriceQuote>({ method: 'POST', path, json: body, signal: signalOf(opts) })).body;
  }
}

export class Styles {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /**
   * Starts training a style (`POST /styles/train`, a `loraTraining` job) and, with `wait`, waits
   * for its end; the completed job's `result` names the new style (`style_id`).
   */
  train(body: StyleTrainingRequest, opts: CreateOptions = {}): Promise<Job> {
    return createJob(this.#t, { path: '/styles/train', body }, opts);
  }
}

export class NodeApps {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /**
   * Runs a node-app version (`POST /node-apps/{id}/execute`, `id` the version's) with its inputs
   * and, with `wait`, waits for its end. The server answers an array of one job: this is that job.
   */
  execute(id: string, inputs: NodeAppInputs, opts: CreateOptions = {}): Promise<Job> {
    return createJob(this.#t, { path: `/node-apps/${encodeURIComponent(id)}/execute`, body: inputs, pick: onlyJob }, opts);
  }
}

export class Mediagen {
  readonly jobs: Jobs;
  readonly assets: Assets;
  readonly models: Models;
  readonly styles: Styles;
  readonly nodeApps: NodeApps;
  /** The token's workspace: member, role, balance, limits. */
  readonly workspace: WorkspaceApi;
  /** API tokens (owners and admins). */
  readonly tokens: Tokens;
  /** The webhook signing secret and the workspace's deliveries. */
  readonly webhooks: Webhooks;
  readonly #t: Transport;

  constructor(opts: MediagenOptions) {
    this.#t = new Transport(opts);
    this.jobs = new Jobs(this.#t);
    this.assets = new Assets(this.#t);
    this.models = new Models(this.#t);
    this.styles = new Styles(this.#t);
    this.nodeApps = new NodeApps(this.#t);
    this.workspace = new WorkspaceApi(this.#t);
    this.tokens = new Tokens(this.#t);
    this.webhooks = new Webhooks(this.#t);
  }

  /** The base URL requests go to. */
  get baseUrl(): string {
    return this.#t.baseUrl;
  }

  /**
   * Creates a job of `model` (`POST /generate/{model}`) and, with `wait`, waits for its end. The
   * job comes back as `GET /jobs/{id}` shows it (`completed_at` and `result` absent until set).
   */
  generate<M extends ModelPath | (string & {})>(model: M, body: GenerateBody<M>, opts: GenerateOptions = {}): Promise<Job> {
    const headers = opts.zeroDataRetention ? { 'x-api-zero-data-retention': '1' } : undefined;
    return createJob(this.#t, { path: modelRoute(model), body, ...(headers ? { headers } : {}) }, opts);
  }

  /** One page of the usage report: charged jobs in a time window, newest first. */
  async usage(query: UsageQuery & RequestOptions = {}): Promise<UsagePage> {
    const { signal, ...q } = query;
    return (await this.#t.json<UsagePage>({ method: 'GET', path: '/usage', query: q, signal })).body;
  }

  /**
   * The usage report summed by the server (`GET /usage/summary`): the window's total and, with
   * `group_by`, its sums by day (in `utc_offset`), model, engine or tag, or several, in integer micro-USD
   * (by tag, a job with two tags counts under both and the untagged under `tag: null`).
   */
  async usageSummary(query: UsageSummaryQuery & RequestOptions = {}): Promise<UsageSummary> {
    const { signal, group_by, ...rest } = query;
    const q: Call['query'] = { ...rest, group_by: typeof group_by === 'string' || group_by === undefined ? group_by : group_by.join(',') };
    return (await this.#t.json<UsageSummary>({ method: 'GET', path: '/usage/summary', query: q, signal })).body;
  }

  /** Every item of the usage report in the window, across all pages. */
  usageItems(query: Omit<UsageQuery, 'cursor'> & RequestOptions = {}): AsyncGenerator<UsageItem, void, undefined> {
    return pages((cursor) => this.usage({ ...query, ...(cursor ? { cursor } : {}) }));
  }
}
