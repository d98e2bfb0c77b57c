import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Clock } from '../../lib/clock.js';
import { backoffMs, parseRetryAfter } from '../../lib/backoff.js';
import { isPlainObject } from '../../lib/plain-object.js';
import { REMOTE_PATH_PREFIX, STOP_REASONS } from '../../services/remote/remote-constants.js';
import type { StopReason } from '../../services/remote/remote-constants.js';
import type {
  ClaimAnswerView,
  ClaimRequestBody,
  ClaimedJobView,
  CompleteAnswerView,
  CompleteRequestBody,
  FailAnswerView,
  FailRequestBody,
  ProgressAnswerView,
  ProgressRequestBody,
  UploadAnswerView,
} from '../../services/remote/remote-views.js';

/**
 * What a worker reads of a refusal's JSON: each field only if it is a string (cut at 1000
 * characters), so any may be missing, since a proxy may answer instead of the server. The server
 * sends `{error}` (http/openapi/common-schemas.ts), `{error, reason}` with a 409 on a job route
 * (`reason`: a StopReason, remote-views.ts's StopReasonField), and `{error, code}` when a signed
 * input could not be loaded (`code`: a job error code). Unchecked here: JobStopped reads `reason`,
 * inputs.ts reads `code`.
 */
export interface ErrorBody {
  readonly error?: string;
  readonly reason?: string;
  readonly code?: string;
}

/** How failed calls are retried: network errors, 429 and 5xx, with capped, jittered exponential backoff. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ attempts: 6, baseMs: 250, maxMs: 5000 });

export interface WorkerClientOptions {
  /** The server's base URL (with its path prefix, if any). */
  readonly server: URL;
  /** The worker token; sent only to `server`'s origin, never logged. */
  readonly token: string;
  readonly clock: Clock;
  readonly retry?: Partial<RetryPolicy>;
  /** Time one call (not a claim's long-poll or an upload) may take before it counts as a network error. */
  readonly callTimeoutMs?: number;
  /** Tests: a fetch of their own, a fixed jitter. */
  readonly fetch?: typeof fetch;
  readonly random?: () => number;
}

/** The server refused a call (a 4xx, or a 5xx/429 left after the retries). */
export class ProtocolError extends Error {
  override readonly name: string = 'ProtocolError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    what: string,
  ) {
    super(`${what}: the server answered HTTP ${status}${body.error ? `: ${body.error}` : ''}`);
  }
}

/** 409 on a job route: the job is no longer this worker's to work on. */
export class JobStopped extends ProtocolError {
  override readonly name = 'JobStopped';
  readonly reason: StopReason;
  constructor(body: ErrorBody, what: string) {
    super(409, body, what);
    const r = body.reason;
    this.reason = STOP_REASONS.find((known) => known === r) ?? 'lease_lost';
  }
}

/** The server could not be reached (connection refused or reset, DNS, timeout) after the retries. */
export class ServerUnreachable extends Error {
  override readonly name = 'ServerUnreachable';
  constructor(what: string, cause: unknown) {
    const code = (cause as { cause?: { code?: unknown } } | undefined)?.cause?.code;
    super(`${what}: cannot reach the server${typeof code === 'string' ? ` (${code})` : ''}`, { cause });
  }
}

/** A download larger than its cap. */
export class TooLarge extends Error {
  override readonly name = 'TooLarge';
}

interface Call {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  /** A fresh body per try (an upload's file stream cannot be sent twice). */
  readonly body?: () => Promise<{ body: string | ReadableStream<Uint8Array>; headers: Record<string, string> }>;
  readonly signal?: AbortSignal;
  /** Per try; undefined: no limit but the caller's signal. */
  readonly timeoutMs?: number;
  readonly retry: boolean;
  /** Which statuses are tried again (default: 429 and 5xx). */
  readonly retryStatus?: (status: number) => boolean;
  readonly auth: boolean;
}

const isRetryStatus = (status: number) => status === 429 || status >= 500;

/**
 * The worker's side of the protocol (REMOTE_PATH_PREFIX, `/worker/v1/`): typed calls, JSON in and out, the bearer token on every call
 * to the server. Every job call is safe to repeat (the server guards each by the lease), so
 * network errors, 429 and 5xx are retried with backoff; a claim is not (its caller paces it).
 */
export class WorkerClient {
  readonly #base: string;
  readonly #origin: string;
  readonly #token: string;
  readonly #clock: Clock;
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #random: () => number;

  constructor(opts: WorkerClientOptions) {
    this.#base = `${opts.server.origin}${opts.server.pathname.replace(/\/+$/, '')}`;
    this.#origin = opts.server.origin;
    this.#token = opts.token;
    this.#clock = opts.clock;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#timeoutMs = opts.callTimeoutMs ?? 60_000;
    this.#fetch = opts.fetch ?? fetch;
    this.#random = opts.random ?? Math.random;
  }

  /**
   * A URL the server gave (upload prefix, signed input) taken onto the base URL this worker reaches
   * the server at: the server builds them from its public URL, which a worker on a private network
   * may not reach, and the token must never go to another origin.
   */
  rebase(url: string): string {
    const u = new URL(url);
    const at = u.pathname.indexOf(`${REMOTE_PATH_PREFIX}/`);
    return at < 0 ? u.href : `${this.#base}${u.pathname.slice(at)}${u.search}`;
  }

  /** Long-polls for jobs; ends early when `signal` aborts (its reason is thrown). Not retried. */
  async claim(req: ClaimRequestBody, signal: AbortSignal): Promise<readonly ClaimedJobView[]> {
    const timeoutMs = (req.wait_ms ?? 20_000) + this.#timeoutMs;
    const res = await this.#json<ClaimAnswerView>('claim', 'POST', `${this.#base}${REMOTE_PATH_PREFIX}/claim`, req, { signal, timeoutMs, retry: false });
    if (!isPlainObject(res) || !Array.isArray(res.jobs)) throw new ProtocolError(200, { error: 'the claim answer has no jobs list' }, 'claim');
    return res.jobs;
  }

  progress(jobId: string, req: ProgressRequestBody): Promise<ProgressAnswerView> {
    return this.#json('progress', 'POST', this.#jobUrl(jobId, 'progress'), req, { retry: true });
  }

  complete(jobId: string, req: CompleteRequestBody): Promise<CompleteAnswerView> {
    return this.#json('complete', 'POST', this.#jobUrl(jobId, 'complete'), req, { retry: true });
  }

  fail(jobId: string, req: FailRequestBody): Promise<FailAnswerView> {
    return this.#json('fail', 'POST', this.#jobUrl(jobId, 'fail'), req, { retry: true });
  }

  /** PUTs a file to `<upload_url><name>?lease_id=…`, streamed from disk (a fresh stream per try). */
  async upload(job: Pick<ClaimedJobView, 'upload_url' | 'lease_id'>, name: string, path: string, contentType: string, signal: AbortSignal): Promise<UploadAnswerView> {
    const url = `${this.rebase(job.upload_url)}${encodeURIComponent(name)}?lease_id=${encodeURIComponent(job.lease_id)}`;
    const body = async () => {
      const { size } = await stat(path);
      const stream = Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>;
      return { body: stream, headers: { 'content-type': contentType, 'content-length': String(size) } };
    };
    const res = await this.#send(`upload ${name}`, { method: 'PUT', url, body, signal, retry: true, auth: true });
    return (await this.#answer(`upload ${name}`, res)) as UploadAnswerView;
  }

  /**
   * GETs a signed input URL (no token: the signature is the credential), reading at most
   * `maxBytes`. A refusal comes back as its status and JSON body, for the caller to word.
   */
  async download(url: string, maxBytes: number, timeoutMs: number, signal: AbortSignal): Promise<{ ok: true; data: Buffer } | { ok: false; status: number; body: ErrorBody }> {
    // A 502 is the server's answer about the input's origin (`{error, code}`), not a passing fault of its own.
    const retryStatus = (status: number) => status !== 502 && isRetryStatus(status);
    const res = await this.#send('input', { method: 'GET', url: this.rebase(url), signal, timeoutMs, retry: true, retryStatus, auth: false });
    if (!res.ok) return { ok: false, status: res.status, body: await errorBody(res) };
    const length = Number(res.headers.get('content-length') ?? NaN);
    if (length > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new TooLarge(`larger than ${maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body ?? []) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new TooLarge(`larger than ${maxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return { ok: true, data: Buffer.concat(chunks, total) };
  }

  #jobUrl(jobId: string, action: string): string {
    return `${this.#base}${REMOTE_PATH_PREFIX}/jobs/${encodeURIComponent(jobId)}/${action}`;
  }

  async #json<T>(what: string, method: 'POST', url: string, payload: unknown, opts: { signal?: AbortSignal; timeoutMs?: number; retry: boolean }): Promise<T> {
    const text = JSON.stringify(payload);
    const body = () => Promise.resolve({ body: text, headers: { 'content-type': 'application/json' } });
    const res = await this.#send(what, { method, url, body, timeoutMs: this.#timeoutMs, auth: true, ...opts });
    return (await this.#answer(what, res)) as T;
  }

  /** A 2xx's JSON; anything else thrown as a ProtocolError (JobStopped for 409). */
  async #answer(what: string, res: Response): Promise<unknown> {
    if (!res.ok) {
      const body = await errorBody(res);
      throw res.status === 409 ? new JobStopped(body, what) : new ProtocolError(res.status, body, what);
    }
    const text = await res.text();
    try {
      return text === '' ? {} : (JSON.parse(text) as unknown);
    } catch {
      throw new ProtocolError(res.status, { error: 'the answer is not JSON' }, what);
    }
  }

  async #send(what: string, call: Call): Promise<Response> {
    const attempts = call.retry ? Math.max(1, this.#retry.attempts) : 1;
    for (let attempt = 1; ; attempt++) {
      call.signal?.throwIfAborted();
      const last = attempt >= attempts;
      let res: Response;
      try {
        res = await this.#once(call);
      } catch (err) {
        if (call.signal?.aborted) throw call.signal.reason;
        if (last) throw new ServerUnreachable(what, err);
        await this.#clock.sleep(this.#backoff(attempt), call.signal);
        continue;
      }
      if (last || !(call.retryStatus ?? isRetryStatus)(res.status)) return res;
      const after = parseRetryAfter(res.headers.get('retry-after') ?? undefined, this.#clock.nowMs());
      await res.body?.cancel().catch(() => undefined);
      await this.#clock.sleep(Math.min(this.#retry.maxMs * 4, Math.max(this.#backoff(attempt), after ?? 0)), call.signal);
    }
  }

  async #once(call: Call): Promise<Response> {
    const prepared = await call.body?.();
    const headers: Record<string, string> = { accept: 'application/json', ...prepared?.headers };
    // The token goes to the server this worker was pointed at, nowhere else.
    if (call.auth && new URL(call.url).origin === this.#origin) headers.authorization = `Bearer ${this.#token}`;
    const timeout = call.timeoutMs === undefined ? undefined : AbortSignal.timeout(call.timeoutMs);
    const signals = [call.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const init: RequestInit & { duplex?: 'half' } = {
      method: call.method,
      headers,
      ...(prepared ? { body: prepared.body } : {}),
      ...(prepared && typeof prepared.body !== 'string' ? { duplex: 'half' as const } : {}),
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      redirect: 'error',
    };
    return this.#fetch(call.url, init);
  }

  #backoff(attempt: number): number {
    return Math.round(backoffMs(attempt, this.#retry.baseMs, this.#retry.maxMs) * (0.5 + this.#random() / 2));
  }
}

async function errorBody(res: Response): Promise<ErrorBody> {
  const text = await res.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!isPlainObject(parsed)) return {};
    const pick = (k: string) => (typeof parsed[k] === 'string' ? { [k]: (parsed[k] as string).slice(0, 1000) } : {});
    return { ...pick('error'), ...pick('reason'), ...pick('code') };
  } catch {
    return {};
  }
}
