import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { EngineError, RunStopped } from '../engine.js';
import { UpstreamError } from './upstream-error.js';
import { UpstreamRetry } from './upstream-retry.js';

/**
 * Cancel-when-stopped: work an upstream holds for a job is cancelled there whenever this side
 * ends the job and the upstream would otherwise run on at the operator's cost:
 * - the run was stopped because the job was cancelled (or deleted) or timed out;
 * - the engine gave up on the job while the upstream still held it (retries ran into the deadline,
 *   an answer it could not use, the upstream told not to retry).
 * A run stopped because its lease was lost or the worker shuts down leaves the work running: the
 * job's next run resumes it. Neither does any other failure (a database or disk fault): the job is
 * requeued, and its next run resumes the work.
 */

/** How long a cancel may take in all, its retries included: the run has already ended. */
export const CANCEL_BUDGET_MS = 15_000;

/** Whether ending a run with `err` (its stop reason, or what the engine threw) should cancel the work upstream. */
export function cancelsUpstream(err: unknown): boolean {
  if (err instanceof RunStopped) return err.why === 'cancelled' || err.why === 'timeout';
  return err instanceof UpstreamError || err instanceof EngineError;
}

export interface CancelUpstreamOptions {
  /** Asks the upstream to stop the work; `signal` bounds the call. */
  readonly cancel: (signal: AbortSignal) => Promise<void>;
  readonly clock: Clock;
  /** The first backoff between tries. */
  readonly baseMs: number;
  readonly log?: Pick<Log, 'warn'>;
  /** Names the upstream in log lines; never a key. */
  readonly label: Readonly<Record<string, unknown>>;
  /** Why the work is cancelled (`cancelled`, `timeout`, `gave-up`): logged when it fails. */
  readonly why: string;
}

/**
 * Cancels the work upstream, retrying passing trouble for up to CANCEL_BUDGET_MS, and never
 * throws: a cancel that fails is logged, since the job has ended either way.
 */
export async function cancelUpstream(opts: CancelUpstreamOptions): Promise<void> {
  const signal = AbortSignal.timeout(CANCEL_BUDGET_MS);
  const retry = new UpstreamRetry({
    signal,
    deadlineMs: opts.clock.nowMs() + CANCEL_BUDGET_MS,
    clock: opts.clock,
    baseMs: opts.baseMs,
    submitAttempts: 1,
    ...(opts.log ? { log: opts.log } : {}),
    label: opts.label,
  });
  try {
    await retry.follow(() => opts.cancel(signal));
  } catch (err) {
    // The error's name and status only: an upstream's message may quote the job's input.
    opts.log?.warn({ ...opts.label, why: opts.why, err: { name: (err as Error)?.name, status: err instanceof UpstreamError ? err.status : undefined } }, 'could not cancel the job at the upstream');
  }
}
