/**
 * What the client throws. A refusal or failure the server answered is a `MediagenError` carrying
 * the HTTP status and the body's fields; a request that got no answer is a `MediagenNetworkError`.
 * An abort (the caller's `signal`) rethrows the signal's reason untouched.
 */

/** An HTTP answer outside 2xx, after any retries. */
export class MediagenError extends Error {
  override readonly name = 'MediagenError';
  /** The HTTP status. */
  readonly status: number;
  /**
   * The body's `error`: what went wrong in words (`{"error": "..."}`); for a retired model's 410
   * the code `model_unavailable`, its words being the `message`.
   */
  readonly error: string;
  /** Seconds the server asked to wait before retrying (`Retry-After`), when it said. */
  readonly retryAfter?: number;
  /** The 410 of a retired model: the day it was retired (YYYY-MM-DD). */
  readonly sunsetDate?: string;
  /** The 410 of a retired model: the model path to use instead, when there is one. */
  readonly replacement?: string;
  /** The 410 of a retired model: where the migration is described, when there is a replacement. */
  readonly migrationUrl?: string;
  /** A 409 of `POST /jobs/{id}/cancel`: the status the job had already ended in. */
  readonly jobStatus?: string;
  /** The server's request id (`X-Request-Id`), to quote when asking about this request. */
  readonly requestId?: string;
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, body: unknown, headers?: { get(name: string): string | null }) {
    const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    const error = text(fields.error) ?? (typeof body === 'string' && body.trim() !== '' ? body.trim().slice(0, 500) : `HTTP ${status}`);
    super(text(fields.message) ?? error);
    this.status = status;
    this.error = error;
    this.body = body;
    const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null, Date.now());
    if (retryAfter !== undefined) this.retryAfter = Math.ceil(retryAfter / 1000);
    const requestId = headers?.get('x-request-id');
    if (requestId) this.requestId = requestId;
    if (status === 410) {
      if (text(fields.sunset_date)) this.sunsetDate = text(fields.sunset_date);
      if (text(fields.replacement)) this.replacement = text(fields.replacement);
      if (text(fields.migration_url)) this.migrationUrl = text(fields.migration_url);
    }
    if (status === 409 && text(fields.status)) this.jobStatus = text(fields.status);
  }
}

/** No HTTP answer: the server could not be reached, or the connection broke mid-request. */
export class MediagenNetworkError extends Error {
  override readonly name = 'MediagenNetworkError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * `Retry-After` in milliseconds from `nowMs`: delay-seconds or an HTTP date (RFC 9110 10.2.3);
 * undefined when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The error of a non-2xx response, its body read (JSON when it is JSON). */
export async function errorFromResponse(res: Response): Promise<MediagenError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    text = '';
  }
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return new MediagenError(res.status, body, res.headers);
}

/** True for the abort of a caller's signal (or of a timeout the client set up itself). */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return (signal?.aborted ?? false) || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'));
}
