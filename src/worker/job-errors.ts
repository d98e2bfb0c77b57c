import { EngineError } from '../engines/engine.js';
import type { JobError } from '../services/jobs/job-runs.js';

/** What the client reads when the engine failed for a reason of its own; the log has the rest. */
export const ENGINE_FAILED_MESSAGE = 'the engine failed unexpectedly';

// An absolute POSIX path (at least two segments, so `a/b` ratios and `image/png` stay), or a
// Windows drive path. Inside URLs the path follows a host, not a space or quote, so URLs survive.
const ABSOLUTE_PATH = /(^|[\s'"`(=:,[])(?:\/(?:[\w.@+~-]+\/)+[\w.@+~-]*|[A-Za-z]:\\[^\s'"`]+)/g;

/** Replaces absolute server paths in a message with `<path>`; the one scrubber of job messages. */
export function scrubPaths(message: string): string {
  return message.replace(ABSOLUTE_PATH, (_m, lead: string) => `${lead}<path>`);
}

/**
 * The `error` a failed job shows its client. An EngineError's message is meant for the client
 * (which input, what is wrong) and is kept, scrubbed of paths; `engine_failed` and anything that
 * is not an EngineError get a fixed sentence, since their text is the engine's internals.
 */
export function clientJobError(reason: unknown): JobError {
  if (reason instanceof EngineError && reason.code !== 'engine_failed') {
    return { code: reason.code, message: scrubPaths(reason.message).slice(0, 1000) };
  }
  return { code: 'engine_failed', message: ENGINE_FAILED_MESSAGE };
}

/** Everything the server log keeps of a failure: message, stack, errno code, an engine's detail and causes. */
export function errorDetail(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown; detail?: unknown; errno?: unknown; syscall?: unknown };
  const out: Record<string, unknown> = { name: e.name, message: e.message, stack: e.stack };
  if (e.code !== undefined) out.code = e.code;
  if (e.syscall !== undefined) out.syscall = e.syscall;
  // Only an engine's own detail: a driver's `detail` (PostgreSQL's) can quote row values, a prompt among them.
  if (e.name === 'EngineError' && e.detail !== undefined) out.detail = e.detail instanceof Error ? errorDetail(e.detail, depth + 1) : e.detail;
  if (e.cause !== undefined && depth < 5) out.cause = errorDetail(e.cause, depth + 1);
  return out;
}
