import type { Clock } from '../../lib/clock.js';
import { PROVIDER_TYPE_LIST } from '../../config/provider-types.js';
import type { ProviderHttp, ProviderType } from './provider-port.js';
import { UpstreamError, cleanUpstreamMessage } from '../upstream/upstream-error.js';
import { fetchFailure, readCappedBody, retryHints } from '../upstream/upstream-http.js';

/** The largest JSON answer a provider may send: an OpenAI answer with four base64 PNGs fits easily. */
export const MAX_PROVIDER_JSON_BYTES = 64 * 1024 * 1024;

/** How each type authenticates: its `authScheme` (config/provider-types.ts; fal: `Key`, the others: `Bearer`). */
const AUTH = Object.fromEntries(PROVIDER_TYPE_LIST.map((t) => [t.name, (key: string) => `${t.authScheme} ${key}`])) as Readonly<Record<ProviderType, (key: string) => string>>;

/** One provider call, as metrics count it. */
export interface ProviderCallOutcome {
  readonly method: string;
  /** `ok`, or the UpstreamError class that ended it. */
  readonly outcome: 'ok' | 'rejected' | 'unavailable' | 'malformed';
  readonly ms: number;
}

export interface ProviderHttpOptions {
  readonly type: ProviderType;
  readonly baseUrl: string;
  readonly apiKey: () => string;
  readonly timeoutMs: number;
  /** Origins besides the base URL's that the key may be sent to (fal's storage API). */
  readonly trustedOrigins?: readonly string[];
  /** Aborts every call: the run's signal. */
  readonly signal?: AbortSignal;
  readonly clock: Clock;
  readonly onCall?: (call: ProviderCallOutcome) => void;
}

const RETRYABLE = new Set([408, 409, 425, 429]);

/**
 * The HTTP client adapters speak through: the base URL joined, the key attached (and only ever
 * sent to the base URL's origin or one the caller trusts), a timeout per call, errors mapped onto
 * UpstreamError classes with the provider's message cleaned of the key and URLs, and every call
 * counted. Built per run, with the run's signal, so a cancelled job stops its calls.
 */
export function createProviderHttp(opts: ProviderHttpOptions): ProviderHttp {
  const base = new URL(`${opts.baseUrl.replace(/\/+$/, '')}/`);
  const trusted = new Set([base.origin, ...(opts.trustedOrigins ?? []).map((o) => new URL(o).origin)]);

  const target = (pathOrUrl: string): URL => {
    const url = /^https?:\/\//i.test(pathOrUrl) ? new URL(pathOrUrl) : new URL(pathOrUrl.replace(/^\/+/, ''), base);
    if (!trusted.has(url.origin)) throw new UpstreamError('malformed', `the provider pointed at a host it was not configured with (${url.host})`);
    return url;
  };

  async function call(method: string, pathOrUrl: string, body: string | Uint8Array | FormData | undefined, headers: Record<string, string>): Promise<unknown> {
    const started = opts.clock.nowMs();
    let outcome: ProviderCallOutcome['outcome'] = 'ok';
    const key = opts.apiKey();
    try {
      const url = target(pathOrUrl);
      const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]) : AbortSignal.timeout(opts.timeoutMs);
      let res: Response;
      try {
        res = await fetch(url, { method, body: body ?? null, headers: { authorization: AUTH[opts.type](key), accept: 'application/json', 'user-agent': 'mediagen', ...headers }, signal, redirect: 'error' });
      } catch (err) {
        throw fetchFailure(err, { ...(opts.signal ? { signal: opts.signal } : {}), timeoutMs: opts.timeoutMs, who: 'the provider' });
      }
      const text = (await readCappedBody(res, { maxBytes: MAX_PROVIDER_JSON_BYTES, what: "the provider's answer", ...(opts.signal ? { signal: opts.signal } : {}) })).toString('utf8');
      if (res.status >= 400) {
        const hints = retryHints(res.headers, opts.clock.nowMs());
        const kind = (res.status >= 500 || RETRYABLE.has(res.status)) && !outOfQuota(text) ? 'unavailable' : 'rejected';
        const message = cleanUpstreamMessage(`${res.status}: ${errorText(text)}`, key);
        throw new UpstreamError(kind, message, { status: res.status, ...hints });
      }
      if (text.trim() === '') return null;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UpstreamError('malformed', `the provider answered ${res.status} with a body that is not JSON`);
      }
    } catch (err) {
      if (err instanceof UpstreamError) outcome = err.kind === 'failed' ? 'rejected' : err.kind;
      else outcome = 'unavailable';
      throw err;
    } finally {
      opts.onCall?.({ method, outcome, ms: opts.clock.nowMs() - started });
    }
  }

  return {
    json: (method, pathOrUrl, body, headers = {}) =>
      call(method, pathOrUrl, body === undefined ? undefined : JSON.stringify(body), body === undefined ? { ...headers } : { 'content-type': 'application/json', ...headers }),
    send: (method, pathOrUrl, body, headers = {}) => call(method, pathOrUrl, body, { ...headers }),
  };
}

/**
 * OpenAI's 429 `insufficient_quota` (the account is out of credit, https://platform.openai.com/docs/guides/error-codes):
 * no wait makes it pass, so it is a refusal, not passing trouble.
 */
function outOfQuota(text: string): boolean {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; type?: unknown } } | null)?.error;
    return error?.code === 'insufficient_quota' || error?.type === 'insufficient_quota';
  } catch {
    return false;
  }
}

/** The human part of an error body: `detail` (Replicate), `error.message` (OpenAI), `error` (krea), `detail[].msg` (fal). */
export function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as unknown;
    const pick = (v: unknown): string | undefined => {
      if (typeof v === 'string') return v;
      if (Array.isArray(v)) return v.map((d) => pick(d)).filter(Boolean).join('; ') || undefined;
      if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        return pick(o.detail) ?? pick(o.message) ?? pick(o.msg) ?? pick(o.error) ?? pick(o.title);
      }
      return undefined;
    };
    return pick(body) ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
