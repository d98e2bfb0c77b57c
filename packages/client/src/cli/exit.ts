import { SettingsError } from './settings.js';
import { MediagenError, MediagenNetworkError } from '../index.js';
import type { Job } from '../index.js';

/**
 * The exit status of the client commands (`mediagen generate|jobs|assets|models|usage`): what
 * happened, for scripts. docs/clients.md and `--help` list them.
 */
export const EXIT = {
  /** Done; a waited-for job completed. */
  ok: 0,
  /** Anything else: the server could not be reached, answered 5xx, or a download failed. */
  error: 1,
  /** A mistake in the command line (unknown flag, missing argument, unreadable --body). */
  usage: 2,
  /** The job failed. */
  failed: 3,
  /** The job was cancelled (or deleted while waited for). */
  cancelled: 4,
  /** The server refused the request (HTTP 4xx: invalid body, unknown job, no balance, retired model...). */
  refused: 5,
  /** The wait ended (--timeout) before the job did. */
  timeout: 6,
  /** Ctrl-C while waiting (the job goes on). */
  interrupted: 130,
} as const;

export const EXIT_HELP = `Exit status:
  0  done (a waited-for job completed)      4  the job was cancelled or deleted
  1  server unreachable, 5xx, or I/O error  5  refused by the server (HTTP 4xx)
  2  usage error (flags, arguments)         6  --timeout ran out before the job ended
  3  the job failed                        130  interrupted (Ctrl-C) while waiting; the job goes on
`;

/** A mistake in the command line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A refusal the command line words itself (exit status 5), such as an unknown model with a suggestion. */
export class Refusal extends Error {
  override readonly name = 'Refusal';
}

/** Outputs that could not be downloaded or saved. */
export class DownloadError extends Error {
  override readonly name = 'DownloadError';
}

/** The exit status a waited-for job ends the command with. */
export function exitForJob(job: Job): number {
  switch (job.status) {
    case 'completed':
      return EXIT.ok;
    case 'failed':
      return EXIT.failed;
    case 'cancelled':
      return EXIT.cancelled;
    default:
      return EXIT.timeout;
  }
}

/** An error as one line and its exit status; undefined for a bug (which keeps its stack). */
export function describeError(err: unknown): { line: string; code: number } | undefined {
  if (err instanceof MediagenError) {
    const id = err.requestId ? `, request ${err.requestId}` : '';
    const wait = err.retryAfter !== undefined ? ` (retry in ${err.retryAfter} s)` : '';
    const code = err.status >= 400 && err.status < 500 ? EXIT.refused : EXIT.error;
    return { line: `${err.message}${wait} (HTTP ${err.status}${id})`, code };
  }
  if (err instanceof Refusal) return { line: err.message, code: EXIT.refused };
  if (err instanceof MediagenNetworkError || err instanceof DownloadError) return { line: err.message, code: EXIT.error };
  if (err instanceof UsageError || err instanceof SettingsError || (err as { code?: string } | undefined)?.code?.startsWith('ERR_PARSE_ARGS')) {
    return { line: (err as Error).message.trim().replace(/\s*\n\s*/g, ' '), code: EXIT.usage };
  }
  return undefined;
}
