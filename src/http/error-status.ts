import { DomainError } from '../domain/error-catalogue.js';
import type { ErrorCode, ErrorDetails } from '../domain/error-catalogue.js';

/** The HTTP status of each catalogue code: exactly one each (docs/errors.md tables them). */
export const HTTP_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  api_access_disabled: 403,
  forbidden: 403,
  insufficient_balance: 402,
  token_budget_exceeded: 402,
  model_not_allowed: 403,
  not_found: 404,
  route_not_found: 404,
  request_timeout: 408,
  idempotency_key_in_flight: 409,
  model_unavailable: 410,
  payload_too_large: 413,
  storage_quota_exceeded: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  output_expired: 410,
  idempotency_key_reused: 422,
  too_many_jobs: 429,
  too_many_streams: 429,
  job_ended: 409,
  headers_too_large: 431,
  worker_conflict: 409,
  input_unavailable: 502,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

/**
 * An error only HTTP can produce, with headers that belong to the protocol rather than to the
 * rule that refused (Content-Range of a 416, Connection: close while shutting down).
 */
export class HttpError extends DomainError {
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, opts: ErrorDetails & { headers?: Record<string, string> } = {}) {
    const { headers, ...details } = opts;
    super(code, message, details);
    this.headers = headers ?? {};
  }
}

export const statusOf = (err: DomainError): number => HTTP_STATUS[err.code];

/** Retry-After from the error's details, plus any protocol headers of an HttpError. */
export function headersOf(err: DomainError): Record<string, string> {
  return {
    ...(err.details.retryAfterSeconds !== undefined ? { 'retry-after': String(err.details.retryAfterSeconds) } : {}),
    ...(err instanceof HttpError ? err.headers : {}),
  };
}

/** The JSON body: `{"error": message}` plus the code's own fields (the 410 body of spec 7). */
export const bodyOf = (err: DomainError): Record<string, unknown> => ({ error: err.message, ...err.details.fields });

/** The catalogue code for a status Fastify reports on its own (a 4xx of its router or parser). */
export const codeForStatus = (status: number): ErrorCode =>
  (Object.keys(HTTP_STATUS) as ErrorCode[]).find((c) => HTTP_STATUS[c] === status) ?? 'invalid_request';
