import { parseRetryAfter } from '../../lib/backoff.js';
import { UpstreamError } from './upstream-error.js';

/**
 * HTTP facts every engine that calls an upstream needs the same way: whether a failed request
 * ever left this machine (the one thing that makes resending a submission safe), the upstream's
 * hints on retrying, and a body read with a cap.
 */

/**
 * Socket and undici codes (fetch's `err.cause.code`) of a connection that never opened, so no
 * byte of the request was sent: refused, no such host, no route, undici's connect timeout. A
 * reset, a socket closed by the other side (UND_ERR_SOCKET) or a headers timeout may come after
 * the upstream read the whole request, so they are not here.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether `err` (what fetch threw, or its cause) says the connection was never made. */
export function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: unknown } | null)?.cause ?? err;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  // The fetch standard's "bad port" (9, 25, 6000...): undici refuses it before connecting, with no code.
  if (code === undefined && (cause as Error | null)?.message === 'bad port') return true;
  // Happy eyeballs tries each address; all of them failing to connect is still "never sent".
  const all = (cause as { errors?: unknown } | null)?.errors;
  return Array.isArray(all) && all.length > 0 && all.every((e) => neverSent(e));
}

/**
 * What fetch threw, as an UpstreamError `unavailable` (`notSent` when the connection never
 * opened), or the run's stop reason when the run's signal ended it. `who` names the upstream in
 * the message ("the provider", "ComfyUI").
 */
export function fetchFailure(err: unknown, opts: { readonly signal?: AbortSignal; readonly timeoutMs: number; readonly who: string }): unknown {
  if (opts.signal?.aborted) return opts.signal.reason;
  if ((err as Error | null)?.name === 'TimeoutError') return new UpstreamError('unavailable', `${opts.who} did not answer within ${opts.timeoutMs} ms`, { cause: err });
  const notSent = neverSent(err);
  return new UpstreamError('unavailable', notSent ? `could not connect to ${opts.who}` : `the connection to ${opts.who} was lost`, { cause: err, notSent });
}

export interface RetryHints {
  readonly retryAfterMs?: number;
  readonly shouldRetry?: boolean;
}

/**
 * An answer's hints on retrying, as OpenAI's node SDK reads them (src/client.ts, `shouldRetry`
 * and `retryRequest`): `x-should-retry: true|false` is the upstream's own word; `retry-after-ms`
 * (milliseconds, fractions allowed) wins over `Retry-After` (seconds or an HTTP date).
 */
export function retryHints(headers: Headers, nowMs: number): RetryHints {
  const said = headers.get('x-should-retry')?.trim().toLowerCase();
  const shouldRetry = said === 'true' ? true : said === 'false' ? false : undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  const retryAfterMs = Number.isFinite(ms) && ms >= 0 ? Math.ceil(ms) : parseRetryAfter(headers.get('retry-after') ?? undefined, nowMs);
  return { ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(shouldRetry === undefined ? {} : { shouldRetry }) };
}

/**
 * A response body, refused past `maxBytes` without reading it all (a declared length over the cap
 * is refused before the first byte): `malformed` when too large, `unavailable` when the
 * connection breaks mid-body, the signal's reason when the run stopped. `what` names the answer.
 */
export async function readCappedBody(res: Response, opts: { readonly maxBytes: number; readonly what: string; readonly signal?: AbortSignal }): Promise<Buffer> {
  const tooLarge = () => new UpstreamError('malformed', `${opts.what} is larger than ${opts.maxBytes} bytes`);
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > opts.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body ?? []) {
      total += (chunk as Uint8Array).length;
      if (total > opts.maxBytes) throw tooLarge();
      chunks.push(chunk as Uint8Array);
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new UpstreamError('unavailable', `${opts.what}: the connection was lost while it was read`, { cause: err });
  }
  return Buffer.concat(chunks, total);
}
