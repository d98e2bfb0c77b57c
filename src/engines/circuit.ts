import type { CircuitSettings } from '../config/routing-settings.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { EngineError } from './engine.js';
import { UpstreamError } from './upstream/upstream-error.js';

/** What /readyz and /metrics show of an engine (docs/routing.md, "Circuits"). */
export type CircuitState = 'closed' | 'open' | 'half_open';

/**
 * One engine's circuit, in this process: after `failures` consecutive failures that say nothing
 * about the job (the upstream unreachable, a 5xx, a 429: UpstreamError `unavailable`) it opens for
 * `cooldownMs`; then one job goes through to probe: its success closes the circuit, its failure
 * opens it for another cooldown. Any other end of a run (a completion, a refusal of the request,
 * a failed job) shows the engine answering and resets the count. Opening and closing are logged
 * at warn, once each.
 */
export class Circuit {
  #failures = 0;
  #openedAt: number | undefined;
  #probing = false;

  constructor(
    readonly engine: string,
    readonly settings: CircuitSettings,
    readonly clock: Clock,
    readonly log: Log | undefined,
  ) {}

  get state(): CircuitState {
    if (this.#openedAt === undefined) return 'closed';
    return this.clock.nowMs() >= this.#openedAt + this.settings.cooldownMs ? 'half_open' : 'open';
  }

  /** How long until a probe may go (0: a job may go now). */
  waitMs(): number {
    if (this.#openedAt === undefined) return 0;
    const left = this.#openedAt + this.settings.cooldownMs - this.clock.nowMs();
    return left > 0 ? left : this.#probing ? Math.min(this.settings.cooldownMs, 1000) : 0;
  }

  /** Whether a job may go to the engine now; in half-open, the first caller becomes the probe. */
  allow(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.#probing) return false;
    this.#probing = true;
    return true;
  }

  /** A run's outcome: a failure of the engine (see the class's comment) or anything else. */
  report(err: unknown): void {
    if (err !== undefined && engineDown(err)) return this.#failed();
    this.#failures = 0;
    this.#probing = false;
    if (this.#openedAt !== undefined) {
      this.#openedAt = undefined;
      this.log?.warn({ engine: this.engine }, 'engine circuit closed: the engine answers again');
    }
  }

  /** A run that ended without an outcome for the engine (stopped, lost) frees the probe without judging. */
  abandon(): void {
    this.#probing = false;
  }

  #failed(): void {
    this.#failures++;
    const wasOpen = this.#openedAt !== undefined;
    if (wasOpen || this.#failures >= this.settings.failures) {
      this.#openedAt = this.clock.nowMs();
      this.#probing = false;
      if (!wasOpen) this.log?.warn({ engine: this.engine, failures: this.#failures, cooldownMs: this.settings.cooldownMs }, 'engine circuit opened: its jobs go to the next engine of their chain, or wait');
    }
  }
}

/** The upstream error behind `err` (an EngineError wraps it as its cause), if one is. */
export function upstreamCause(err: unknown): UpstreamError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof UpstreamError) return e;
  }
  return undefined;
}

/** Whether the engine that threw `err` said it provably did not take the job (EngineErrorOptions.notAccepted). */
export function notAccepted(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof EngineError && e.notAccepted) return true;
  }
  return false;
}

/** A failure that says nothing about the job: the engine is unreachable, overloaded or failing (429, 5xx, timeouts), or cannot take work. */
export const engineDown = (err: unknown): boolean => upstreamCause(err)?.kind === 'unavailable' || notAccepted(err);
