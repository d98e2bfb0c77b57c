import { backoffMs } from '../../lib/backoff.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { refusedAtTheDoor, UpstreamError, upstreamJobError } from './upstream-error.js';

/**
 * The money rules of every engine that hands work to an upstream (docs/providers.md, "Money
 * rules"), written once. Two phases:
 *
 * - `submit`, a call that hands the upstream work it may bill for, is sent again only when the
 *   upstream provably did not take it: a 429, or a connection that never opened. A timeout, a
 *   lost connection or a 5xx may come after the upstream took the job, and an upstream that cannot
 *   deduplicate would run (and bill) it twice; so the job fails `upstream_unavailable` instead.
 *   An upstream that deduplicates by idempotency key (`deduplicates`) is retried like a follow.
 *   Such retries stop after `submitAttempts` tries: nothing is held upstream yet, so the client
 *   may as well submit later.
 * - `follow`, every call about work the upstream already holds (status polls, output downloads,
 *   uploads, cancels), retries passing trouble (429, 5xx, timeouts, lost connections) until the
 *   job's deadline, not a count: giving up early would fail a job that is still running, and
 *   billing, upstream.
 *
 * - `prepare`, a call that readies work but hands over nothing billable (an upload before the
 *   submission), is retried like a follow.
 *
 * When the router has a next engine for the job (`fallsBack`: EngineContext.canFallBack), a
 * `prepare` or `submit` the upstream refused at the door (refusedAtTheDoor: never connected, 429,
 * 503) is not tried again here, so the next engine takes the job at once, unless an earlier try of
 * a submission failed past the door (it may hold the job: `refused` then says no).
 *
 * In all, `x-should-retry: false` is obeyed, `x-should-retry: true` makes a follow retry what it
 * would not (a 4xx) but never widens a submission, and the wait is the longer of the backoff and
 * the upstream's `retry-after-ms` / `Retry-After`. A wait that would reach the deadline is not
 * waited: the last error ends the run, so the job fails as the upstream's fault, not `timeout`.
 */

/** The longest backoff between two tries (a Retry-After may ask for longer). */
export const RETRY_MAX_MS = 30_000;

export interface UpstreamRetryOptions {
  /** The run's signal: a wait ends with its reason. */
  readonly signal: AbortSignal;
  /** When the run's job times out (EngineContext.deadlineMs). */
  readonly deadlineMs: number;
  readonly clock: Clock;
  /** The first backoff; it doubles with each failure in a row up to RETRY_MAX_MS. */
  readonly baseMs: number;
  /** Tries of a submission the upstream provably did not take, the first included. */
  readonly submitAttempts: number;
  /** The upstream deduplicates a submission sent again (an Idempotency-Key it honours). */
  readonly deduplicates?: boolean;
  /** The job's chain has a next engine (see the module's comment). */
  readonly fallsBack?: boolean;
  readonly log?: Pick<Log, 'warn'>;
  /** Names the upstream in log lines (`{provider, type}`, `{comfyui}`); never a key or a message. */
  readonly label: Readonly<Record<string, unknown>>;
}

export type UpstreamPhase = 'prepare' | 'submit' | 'follow';

export class UpstreamRetry {
  readonly #o: UpstreamRetryOptions;
  /** A try of a submission failed past the door: the upstream may hold the job. */
  #doubt = false;

  constructor(options: UpstreamRetryOptions) {
    this.#o = options;
  }

  /** Runs a call that hands the upstream work (see the module's comment). */
  submit<T>(call: () => Promise<T>): Promise<T> {
    return this.#run('submit', call);
  }

  /** Runs a call about work the upstream holds (see the module's comment). */
  follow<T>(call: () => Promise<T>): Promise<T> {
    return this.#run('follow', call);
  }

  /** Runs a call that readies work and hands over nothing billable (see the module's comment). */
  prepare<T>(call: () => Promise<T>): Promise<T> {
    return this.#run('prepare', call);
  }

  /** Whether `err`, ending a prepare or submit, proves the upstream holds nothing of the job: it and every earlier failed try of a submission were refused at the door. */
  refused(err: unknown): boolean {
    return refusedAtTheDoor(err) && !this.#doubt;
  }

  /**
   * What a failed prepare or submit ends the run with: with a next engine waiting (`fallsBack`)
   * and the upstream provably holding nothing (`refused`), the job error marked `notAccepted`, so
   * the router hands the job on; else `err` itself.
   */
  refusal(err: unknown): unknown {
    return this.#o.fallsBack && this.refused(err) ? upstreamJobError(err as UpstreamError, true) : err;
  }

  /** Whether `err` may be tried again in `phase` (deadline and attempt count aside). */
  retryable(phase: UpstreamPhase, err: unknown): err is UpstreamError {
    if (!(err instanceof UpstreamError) || err.shouldRetry === false) return false;
    if (phase !== 'follow' && this.#o.fallsBack && this.refused(err)) return false;
    if (phase !== 'submit' || this.#o.deduplicates) return err.kind === 'unavailable' || (phase === 'follow' && err.shouldRetry === true && err.kind === 'rejected');
    return err.kind === 'unavailable' && (err.status === 429 || err.notSent);
  }

  async #run<T>(phase: UpstreamPhase, call: () => Promise<T>): Promise<T> {
    const { clock, signal, log, label } = this.#o;
    for (let failures = 1; ; failures++) {
      try {
        return await call();
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (phase === 'submit' && !refusedAtTheDoor(err)) this.#doubt = true;
        if (!this.retryable(phase, err)) {
          if (err instanceof UpstreamError && err.kind === 'unavailable' && !(this.#o.fallsBack && this.refused(err))) {
            // Why a submission is not sent again is the operator's business: it may have cost money.
            log?.warn({ ...label, phase, status: err.status, failures, notSent: err.notSent }, phase === 'submit' ? 'the upstream may have taken the submission; not sending it again' : 'the upstream said not to retry; giving up on the job');
          }
          throw err;
        }
        const wait = Math.max(backoffMs(failures, this.#o.baseMs, RETRY_MAX_MS), err.retryAfterMs ?? 0);
        const outOfTries = phase === 'submit' && !this.#o.deduplicates && failures >= this.#o.submitAttempts;
        const last = outOfTries || clock.nowMs() + wait >= this.#o.deadlineMs;
        log?.warn({ ...label, phase, status: err.status, failures, waitMs: wait, giveUp: last }, last ? 'upstream keeps failing; giving up on the job' : 'upstream call failed; retrying');
        if (last) throw err;
        await clock.sleep(wait, signal);
      }
    }
  }
}
