/**
 * The error catalogue: every error the service returns is made here, so each code has exactly one
 * HTTP status and one documented meaning (docs/errors.md lists them; a test keeps the two in step).
 */
export const ERROR_CODES = {
  invalid_request: 400,
  unauthenticated: 401,
  api_access_disabled: 403,
  forbidden: 403,
  insufficient_balance: 402,
  not_found: 404,
  route_not_found: 404,
  request_timeout: 408,
  idempotency_key_in_flight: 409,
  model_unavailable: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  idempotency_key_reused: 422,
  too_many_jobs: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra body fields beyond `error` (the 410 body of spec section 7). */
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }

  /** The JSON body: `{"error": message}` unless the code's body is specified otherwise. */
  body(): Record<string, unknown> {
    return { error: this.message, ...this.extra };
  }
}

export const invalid = (message: string) => new AppError('invalid_request', message);
export const notFound = (message: string) => new AppError('not_found', message);
export const forbidden = (message: string) => new AppError('forbidden', message);
