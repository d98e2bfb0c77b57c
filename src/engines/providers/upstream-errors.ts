import { EngineError } from '../engine.js';
import type { UpstreamError } from './provider-port.js';

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

/** The job error an UpstreamError ends a run with. */
export function upstreamJobError(err: UpstreamError): EngineError {
  return new EngineError(CODES[err.kind], UPSTREAM_MESSAGES[err.kind](err.message), { cause: err });
}
