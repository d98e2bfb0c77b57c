/**
 * The error catalogue: every refusal the service makes has one of these codes and a message that
 * says what is wrong. Codes and meanings only: how a transport shows a code (the HTTP status and
 * headers in src/http/error-status.ts, the CLI's wording in src/cli/error-text.ts) is the
 * transport's business. docs/errors.md lists them; a test keeps the two in step.
 */
export const ERROR_CODES = {
  invalid_request: 'the request (body, option, query) is invalid; the message names the field',
  unauthenticated: 'no credentials, or unknown or revoked ones',
  api_access_disabled: "the caller's workspace has API access turned off",
  forbidden: 'the caller may not do this',
  insufficient_balance: "the workspace's available API balance does not cover the price",
  token_budget_exceeded: "the calling API token's own spend limit for its period does not cover the price",
  model_not_allowed: "the calling API token may not create jobs of this model (its `models` patterns)",
  not_found: 'the named job, asset, node app, workspace, token or output does not exist for the caller',
  route_not_found: 'no such operation',
  request_timeout: 'the request did not arrive in time',
  idempotency_key_in_flight: 'the first request with this idempotency key is still being processed',
  model_unavailable: "the model's sunset date has been reached",
  payload_too_large: 'the request is larger than the server accepts',
  storage_quota_exceeded: "the upload would take the workspace's assets past its storage quota",
  unsupported_media_type: 'the request body is not JSON',
  range_not_satisfiable: 'the requested byte range selects nothing of the file',
  output_expired: "the output file's lifetime has passed and it was removed (retention)",
  idempotency_key_reused: 'the idempotency key was used with a different request',
  too_many_jobs: "the workspace's concurrency and backlog are full",
  too_many_streams: 'the workspace, or the server process, holds its maximum of open job event streams',
  job_ended: 'the job has already reached a terminal status',
  headers_too_large: 'the request headers are too large',
  worker_conflict: "a remote worker's call does not fit the job's state: the worker no longer holds the job (`reason` says why) or reports a status behind the job's",
  input_unavailable: "a remote worker's input URL could not be served: the input could not be fetched or read (`code` says which job error it is)",
  internal: 'a bug',
  unavailable: 'the server cannot serve this right now (shutting down, storage failing)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** What an error carries beside its message, for a transport to show in its own way. */
export interface ErrorDetails {
  /** How long the caller should wait before trying again (HTTP sends it as Retry-After). */
  readonly retryAfterSeconds?: number;
  /** Fields the answer carries beside the message: the 410 body of spec 7, the 402 explanation. */
  readonly fields?: Readonly<Record<string, unknown>>;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = details;
  }
}

export const invalid = (message: string) => new DomainError('invalid_request', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
