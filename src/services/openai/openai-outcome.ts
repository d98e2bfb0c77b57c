/**
 * Why a synchronous OpenAI answer (POST /v1/images/*) could not carry its images: a job failed or
 * was cancelled, or the wait ran out. Not a refusal of the request (it was admitted: native jobs
 * exist), so not a DomainError: the /v1 routes answer it with a 5xx in OpenAI's shape whose `code`
 * is the job's own error code (http/plugins/openai-errors.ts).
 */
export class JobOutcomeError extends Error {
  /** `failed`: a job ended failed; `cancelled`: one was cancelled (DELETE /jobs/{id}); `timeout`: the wait ran out. */
  readonly kind: 'failed' | 'cancelled' | 'timeout';
  /** The job's error code (`failed`), `cancelled`, or `timeout`. */
  readonly code: string;
  /** Every job of the request, so a client can follow them natively (GET /jobs/{id}). */
  readonly jobIds: readonly string[];

  constructor(kind: JobOutcomeError['kind'], code: string, message: string, jobIds: readonly string[]) {
    super(message);
    this.name = 'JobOutcomeError';
    this.kind = kind;
    this.code = code;
    this.jobIds = jobIds;
  }
}
