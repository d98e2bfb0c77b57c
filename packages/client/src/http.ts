/**
 * One request to the API, with the client's retry rules:
 * - 429 and 503 are retried after their `Retry-After` (else a backoff), at most `retries` times,
 *   and only while the wait asked for is at most `maxDelayMs`; a longer one is thrown at once with
 *   its `retryAfter`, for the caller to decide;
 * - a 409 "still in flight" of a request with an Idempotency-Key is retried the same way: the first
 *   request with that key is still being processed and its answer will be replayed;
 * - a request that got no answer (the connection failed or broke) is retried only when it is safe:
 *   a GET, or a POST whose Idempotency-Key the client generated itself (the caller's own key may be
 *   meant to fail on reuse; a DELETE or cancel is not repeated blindly).
 * Browser-safe: plain fetch, no Node-only API.
 */
import { MediagenNetworkError, errorFromResponse, isAbort, parseRetryAfter } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  readonly retries?: number;
  /** The longest wait the client sleeps through before a retry (default 60 000 ms). */
  readonly maxDelayMs?: number;
}

export interface TransportOptions {
  /** The server's base URL, with its path prefix if it has one: `https://media.example.com/api`. */
  readonly baseUrl: string;
  /** An API token, sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Retry rules; `false` turns retries off. */
  readonly retry?: RetryOptions | false;
}

export interface Call {
  readonly method: 'GET' | 'POST' | 'DELETE' | 'PATCH';
  /** The path after the base URL, starting with `/`, its segments already encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly json?: unknown;
  readonly form?: FormData;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal | undefined;
  /** A POST whose Idempotency-Key the client generated: safe to repeat after a network error. */
  readonly ownKey?: boolean;
  /** Return any response as is, 4xx and 5xx included (after the 429/503 retries). */
  readonly raw?: boolean;
  /** `false`: no retry of 429, 503 or 409 (network errors are still retried as above). */
  readonly statusRetries?: false;
}

const DEFAULT_RETRIES = 3;
const DEFAULT_MAX_DELAY_MS = 60_000;
const FIRST_BACKOFF_MS = 500;

/** `ms` of sleep that ends early, rejecting with the signal's reason, when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff from 500 ms with up to 25 % jitter, capped. */
export function backoffMs(attempt: number, capMs: number): number {
  const base = Math.min(capMs, FIRST_BACKOFF_MS * 2 ** attempt);
  return Math.round(base * (1 + Math.random() * 0.25));
}

/** A fresh Idempotency-Key: 128 random bits (crypto.getRandomValues works outside secure contexts too). */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `mgc-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The base URL checked and without its trailing slash. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL such as http://localhost:8080, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl must be an http(s) URL, got '${url.protocol}'`);
  if (url.search || url.hash) throw new TypeError('baseUrl must not carry a query or fragment');
  return url.href.replace(/\/+$/, '');
}

export class Transport {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #retries: number;
  readonly #maxDelayMs: number;

  constructor(opts: TransportOptions) {
    this.baseUrl = normalizeBaseUrl(opts.baseUrl);
    this.#token = opts.token;
    // Called unbound: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('no fetch: give one in the options');
    this.#fetch = (input, init) => f(input, init);
    this.#retries = opts.retry === false ? 0 : (opts.retry?.retries ?? DEFAULT_RETRIES);
    this.#maxDelayMs = opts.retry === false ? 0 : (opts.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  }

  url(path: string, query?: Call['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  /** The response of `call`; a non-2xx one is thrown as a MediagenError unless `raw`. */
  async send(call: Call): Promise<Response> {
    const url = this.url(call.path, call.query);
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    let body: string | FormData | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.form) body = call.form;
    const networkSafe = call.method === 'GET' || (call.method === 'POST' && call.ownKey === true);
    const hasKey = Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key');

    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(url, { method: call.method, headers, ...(body !== undefined ? { body } : {}), ...(call.signal ? { signal: call.signal } : {}) });
      } catch (err) {
        if (isAbort(err, call.signal)) throw call.signal?.reason ?? err;
        if (!networkSafe || attempt >= this.#retries) throw networkError(err, this.baseUrl);
        await sleep(backoffMs(attempt, this.#maxDelayMs), call.signal);
        continue;
      }
      const wait = call.statusRetries === false ? undefined : this.#retryWait(res, attempt, hasKey);
      if (wait !== undefined) {
        await res.body?.cancel().catch(() => undefined);
        await sleep(wait, call.signal);
        continue;
      }
      if (res.ok || call.raw) return res;
      throw await errorFromResponse(res);
    }
  }

  /** How long to wait before retrying `res`; undefined when it is not retried. */
  #retryWait(res: Response, attempt: number, hasKey: boolean): number | undefined {
    const retryable = res.status === 429 || res.status === 503 || (res.status === 409 && hasKey && res.headers.has('retry-after'));
    if (!retryable || attempt >= this.#retries) return undefined;
    const asked = parseRetryAfter(res.headers.get('retry-after'), Date.now());
    const wait = asked ?? backoffMs(attempt, this.#maxDelayMs);
    return wait <= this.#maxDelayMs ? wait : undefined;
  }

  /** The JSON body of a 2xx answer, with the answer's headers. */
  async json<T>(call: Call): Promise<{ body: T; headers: Headers }> {
    const res = await this.send(call);
    return { body: (await res.json()) as T, headers: res.headers };
  }
}

function networkError(err: unknown, baseUrl: string): MediagenNetworkError {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  const origin = new URL(baseUrl).origin;
  return new MediagenNetworkError(`cannot reach the mediagen server at ${origin}${typeof cause === 'string' ? ` (${cause})` : ''}`, { cause: err });
}
