import { EngineError } from '../engine.js';

/**
 * Why a call to an upstream (a hosted provider, ComfyUI, a command's process) failed, as the engine acts on it:
 * - `rejected`: the provider refused the request (a 4xx on submit): the job fails `upstream_rejected`.
 * - `failed`: the provider took the job and failed it: `upstream_failed`.
 * - `unavailable`: 429, 5xx, timeouts, lost connections: retried as upstream-retry.ts allows, then `upstream_unavailable`.
 * - `malformed`: an answer not as documented (not JSON, too large, missing fields, wrong media): `upstream_malformed`.
 * The message is for the client: the provider's own words, cleaned of secrets and URLs (cleanUpstreamMessage).
 */
export type UpstreamErrorClass = 'rejected' | 'failed' | 'unavailable' | 'malformed';

export interface UpstreamErrorOptions {
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** The request provably never reached the upstream (refused, name not found, connect timeout): a submission may be sent again. */
  readonly notSent?: boolean;
  /** The upstream's own word on retrying (OpenAI's `x-should-retry: true|false`), where it gave one. */
  readonly shouldRetry?: boolean;
  readonly cause?: unknown;
}

export class UpstreamError extends Error {
  readonly kind: UpstreamErrorClass;
  /** The provider's HTTP status, where there was one. */
  readonly status: number | undefined;
  /** From `retry-after-ms` or `Retry-After`, in ms, where the upstream sent one. */
  readonly retryAfterMs: number | undefined;
  readonly notSent: boolean;
  readonly shouldRetry: boolean | undefined;
  constructor(kind: UpstreamErrorClass, message: string, options: UpstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.notSent = options.notSent ?? false;
    this.shouldRetry = options.shouldRetry;
  }
}

const URL_RE = /\b(?:https?|wss?|ftp|data):[^\s'"<>)]*/gi;
// Bearer tokens and `Key ...` headers (the scheme's capital, a digit in the token, so "API key
// provided" stays words), and the shapes of common provider keys (r8_, sk-, fal's id:secret).
const SECRET_RE = /\b(?:Bearer|Key|Token)\s+(?=[A-Za-z0-9._:~+/=-]*\d)[A-Za-z0-9._:~+/=-]{8,}|\b(?:r8_|sk-|sk_)[A-Za-z0-9_-]{8,}|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9a-f]{16,}\b/g;

/**
 * A provider's message as a client may read it: URLs (which may carry signed tokens or our base
 * URL) and anything shaped like a key become placeholders, `secret` itself (the configured key)
 * is removed wherever it appears, whitespace is folded and the length capped.
 */
export function cleanUpstreamMessage(message: string, secret?: string): string {
  let text = String(message);
  if (secret && secret.length >= 4) text = text.split(secret).join('<secret>');
  text = text.replace(URL_RE, '<url>').replace(SECRET_RE, '<secret>');
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > 500 ? `${text.slice(0, 497)}...` : text || 'no message';
}


/**
 * How a provider's failure reads to the client: the one wording of each `upstream_*` job error,
 * used by the provider engine and by the sandbox's `[mediagen:fail=upstream_*]`, so a client
 * tests its handling against the very sentences a real failure shows.
 */
export const UPSTREAM_MESSAGES = Object.freeze({
  rejected: (said: string) => `the provider refused the request: ${said}`,
  failed: (said: string) => `the provider failed the job: ${said}`,
  unavailable: (said: string) => `the provider could not be reached or kept failing (${said}); you were not billed, submit it again later`,
  malformed: (said: string) => `the provider's answer could not be used: ${said}`,
});

const CODES = {
  rejected: 'upstream_rejected',
  failed: 'upstream_failed',
  unavailable: 'upstream_unavailable',
  malformed: 'upstream_malformed',
} as const;

/**
 * The job error an UpstreamError ends a run with; `notAccepted` when the engine knows the upstream
 * holds nothing of the job (EngineErrorOptions), so the router may hand it to the next engine.
 */
export function upstreamJobError(err: UpstreamError, notAccepted = false): EngineError {
  return new EngineError(CODES[err.kind], UPSTREAM_MESSAGES[err.kind](err.message), { cause: err, notAccepted });
}

/**
 * Whether a failed call proves the upstream did not take what it carried: the connection never
 * opened, or the upstream answered 429 (too many requests) or 503 (not taking work now). A timeout,
 * a lost connection or another 5xx (a gateway's 502 or 504 above a backend that got the request)
 * may come after the upstream stored the work, so they prove nothing (docs/routing.md, "Fallback").
 */
export function refusedAtTheDoor(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError && err.kind === 'unavailable' && (err.notSent || err.status === 429 || err.status === 503);
}
