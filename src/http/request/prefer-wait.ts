import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';
import type { CreatedJobView, JobView } from '../../services/common/job-view.js';
import { presentJob } from '../../services/common/job-view.js';
import type { CreatedJob } from '../../services/jobs/job-admission.js';
import type { AuthContext } from '../../services/identity/identity.js';
import { MAX_WAIT_SECONDS } from '../../services/jobs/job-waits.js';
import type { Services } from '../../services/services.js';
import { logFailure } from '../logging.js';
import type { HeldRequests } from './held-requests.js';
import { headerValues } from './request-headers.js';

/** One preference of a `Prefer` value: a token, then `=` and a token or a quoted string, then `;` parameters. */
const PREFERENCE = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s;"]*)))?\s*(?:;.*)?$/s;

/**
 * The seconds `Prefer: wait[=N]` asks for (RFC 7240), or undefined: not asked, or not a wait this
 * server understands, which RFC 7240 says to ignore (a value that is not a whole number of seconds).
 * Bare `wait` is the longest wait; more than MAX_WAIT_SECONDS is that many. Of several `wait`s
 * (in one header or several), the first counts, as RFC 7240 says.
 */
export function waitPreference(rawHeaders: readonly string[]): number | undefined {
  for (const header of headerValues(rawHeaders, 'prefer')) {
    // Commas inside quoted values do not separate preferences.
    for (const pref of header.match(/(?:[^,"]|"[^"]*")+/g) ?? []) {
      const m = PREFERENCE.exec(pref);
      if (!m || m[1]!.toLowerCase() !== 'wait') continue;
      const value = m[2] ?? m[3];
      if (value === undefined) return MAX_WAIT_SECONDS;
      return /^\d{1,9}$/.test(value) ? Math.min(Number(value), MAX_WAIT_SECONDS) : undefined;
    }
  }
  return undefined;
}

/** What answering after `Prefer: wait` takes: the waiters, the held requests (let go when the server closes), the job view's base URL. */
export interface WaitDeps extends Pick<Services, 'waits'> {
  readonly held: HeldRequests;
  readonly publicUrl: () => string;
}

/**
 * What a job creation answers: the job as created, or, with `Prefer: wait=N`, the job as
 * GET /jobs/{id} shows it once it ended or N seconds passed (or the client left, or the server
 * began closing), with `Preference-Applied: wait=N`. A replay of an Idempotency-Key waits for the
 * first request's job the same way. The creation has committed either way: when the wait cannot
 * be done (the workspace holds its maximum of waits, the job was deleted meanwhile, a read
 * failed), the creation's answer goes out without Preference-Applied.
 */
export async function createdAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  caller: AuthContext,
  created: CreatedJob,
  deps: WaitDeps,
): Promise<CreatedJobView | JobView> {
  const seconds = waitPreference(request.raw.rawHeaders);
  if (seconds === undefined) return created.job;
  const held = deps.held.hold(reply);
  try {
    const waited = await deps.waits.waitForEnd(caller, created.job.job_id, seconds * 1000, held.signal);
    if (!waited.applied) return created.job;
    void reply.header('preference-applied', `wait=${seconds}`);
    return presentJob(waited.job, deps.publicUrl());
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'not_found')) logFailure(request.log, err, 'waiting for a created job failed; answered the creation');
    return created.job;
  } finally {
    held.release();
  }
}
