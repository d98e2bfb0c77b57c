import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { parseRetryAfter } from '../lib/backoff.js';
import { FetchError, isGuardedDispatcher } from '../lib/safe-fetch.js';

/**
 * One webhook delivery attempt: a POST, judged by its status alone. What happens next (another
 * attempt, when, or none) is the caller's; this module only says which of four outcomes it was.
 * `error` strings go to the delivery log the job's owner reads and to server logs, so they are
 * built from fixed phrases and error codes only: never the URL's user-info, the body, the
 * headers or a library's free-text message.
 */

export type WebhookOutcome =
  /** The receiver answered 2xx. */
  | 'delivered'
  /** Worth another attempt: any other status, or no answer (network error, timeout). */
  | 'retry'
  /** 410 Gone: the receiver says this URL is no more; stop retrying this delivery. */
  | 'gone'
  /** Not sent and not to be retried: a URL we will not post to (scheme, refused address). */
  | 'refused';

export interface WebhookAttempt {
  readonly outcome: WebhookOutcome;
  /** The HTTP status received, or null when none was. */
  readonly status: number | null;
  /** Why it was not delivered, in a few words; null when the status says it all. */
  readonly error: string | null;
  readonly durationMs: number;
  /** From the Retry-After header of a 429 or 503, when it had a valid one. */
  readonly retryAfterMs?: number;
}

export interface PostWebhookOptions {
  /** From createGuardedDispatcher; its address policy decides which hosts may be reached. */
  readonly dispatcher: Dispatcher;
  /** For the whole exchange: connecting, sending, the status and headers, and the body read. */
  readonly timeoutMs: number;
  /** The injected clock, for durationMs and HTTP-date Retry-After values. */
  readonly nowMs: () => number;
}

export const WEBHOOK_USER_AGENT = 'mediagen-webhooks/1';

/** How much of a response body is read (and thrown away) so the connection can be reused. */
const MAX_DISCARD_BYTES = 64 * 1024;

const NETWORK_ERRORS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed unexpectedly',
  UND_ERR_CLOSED: 'connection closed unexpectedly',
};

function describeError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'network error';
  const known = NETWORK_ERRORS[code];
  if (known) return known;
  // OpenSSL and Node name TLS failures by code (ERR_SSL_..., CERT_HAS_EXPIRED, ...); the code is
  // what a receiver's operator can look up.
  if (/^ERR_(SSL|TLS)_|CERT|^UNABLE_TO_|^HOSTNAME_MISMATCH$/.test(code)) return `TLS error (${code})`;
  return `network error (${code})`;
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

interface Target {
  readonly url: URL;
  readonly authorization: string | null;
}

/**
 * The URL to post to, without user-info, and the user-info as a Basic Authorization header:
 * receivers commonly protect their webhook endpoint that way, and credentials in a URL would
 * otherwise travel in a form no HTTP client sends. A string is a refusal.
 */
function target(raw: string): Target | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `unsupported URL scheme "${url.protocol}"; webhook URLs must be http or https`;
  }
  if (!url.username && !url.password) return { url, authorization: null };
  const user = decode(url.username);
  const password = decode(url.password);
  if (user === null || password === null) return 'the user name or password in the URL is not valid percent-encoding';
  url.username = '';
  url.password = '';
  return { url, authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` };
}

function decode(component: string): string | null {
  try {
    return decodeURIComponent(component);
  } catch {
    return null;
  }
}

function judge(status: number): Pick<WebhookAttempt, 'outcome' | 'error'> {
  if (status >= 200 && status <= 299) return { outcome: 'delivered', error: null };
  if (status === 410) return { outcome: 'gone', error: null };
  // Following a redirect would POST the signed body to a URL nobody subscribed, and every hop
  // would need the address check again; Standard Webhooks says not to.
  if (status >= 300 && status <= 399) return { outcome: 'retry', error: 'redirect not followed' };
  return { outcome: 'retry', error: null };
}

/** POSTs `body` to `url` once and says what came of it. Never throws for anything the network does. */
export async function postWebhook(
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  opts: PostWebhookOptions,
): Promise<WebhookAttempt> {
  if (!isGuardedDispatcher(opts.dispatcher)) {
    throw new TypeError('postWebhook takes only a dispatcher made by createGuardedDispatcher');
  }
  const started = opts.nowMs();
  const elapsed = () => Math.max(0, Math.round(opts.nowMs() - started));

  const to = target(url);
  if (typeof to === 'string') return { outcome: 'refused', status: null, error: to, durationMs: elapsed() };

  const sent: Record<string, string> = { 'user-agent': WEBHOOK_USER_AGENT };
  for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = value;
  sent['content-type'] = 'application/json';
  if (to.authorization) sent['authorization'] = to.authorization;

  // One deadline for the whole exchange, so a receiver that trickles its answer cannot hold a
  // delivery slot past timeoutMs.
  const controller = new AbortController();
  const timeout = new Error('webhook timeout');
  const timer = setTimeout(() => controller.abort(timeout), opts.timeoutMs);
  try {
    const res = await request(to.url, {
      method: 'POST',
      dispatcher: opts.dispatcher,
      signal: controller.signal,
      headers: sent,
      body,
    });
    // The status decides, even if the body then stalls or breaks: the receiver has answered,
    // and retrying an acknowledged delivery would only send a duplicate. dump() reads at most
    // MAX_DISCARD_BYTES (keeping the connection for reuse) and destroys the stream past that or
    // at the deadline, which closes the connection.
    await res.body.dump({ limit: MAX_DISCARD_BYTES, signal: controller.signal }).catch(() => {});
    const verdict = judge(res.statusCode);
    let retryAfterMs: number | undefined;
    if (res.statusCode === 429 || res.statusCode === 503) {
      retryAfterMs = parseRetryAfter(headerValue(res.headers, 'retry-after'), opts.nowMs());
    }
    return {
      ...verdict,
      status: res.statusCode,
      durationMs: elapsed(),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason === timeout) {
      return { outcome: 'retry', status: null, error: `timeout after ${formatDuration(opts.timeoutMs)}`, durationMs: elapsed() };
    }
    if (err instanceof FetchError && err.reason === 'refused_address') {
      // The guard's message names the host and the address class, never the path or user-info.
      const why = err.message.replace(/^refused: /, '');
      return {
        outcome: 'refused',
        status: null,
        error: `webhook URL refused: ${why}; start the server with --allow-private-urls to allow it`,
        durationMs: elapsed(),
      };
    }
    return { outcome: 'retry', status: null, error: describeError(err), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
