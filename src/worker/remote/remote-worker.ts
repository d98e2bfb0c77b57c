import type { Engine } from '../../engines/engine.js';
import { backoffMs } from '../../lib/backoff.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import type { ClaimedJobView } from '../../services/remote/remote-views.js';
import { SlotLoop } from '../slot-loop.js';
import { ProtocolError } from './protocol-client.js';
import type { WorkerClient } from './protocol-client.js';
import type { RemoteInputLimits } from './inputs.js';
import { runRemoteJob } from './run-remote-job.js';

export interface RemoteWorkerOptions {
  readonly client: WorkerClient;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: Log;
  readonly inputs: RemoteInputLimits;
  /** Jobs run at once; each claim asks for as many as there are free slots. */
  readonly concurrency: number;
  /** The claim's `models` patterns (absent: every model the token allows). */
  readonly models?: readonly string[];
  readonly pool?: string;
  readonly workerId?: string;
  /** How long a claim may wait on the server for a job (default 20000). */
  readonly waitMs?: number;
  /** A claim that comes back empty sooner than this is not repeated before it has passed (default 1000). */
  readonly minClaimGapMs?: number;
  /** The longest wait between claims while the server cannot be reached (default 30000). */
  readonly maxClaimBackoffMs?: number;
  readonly scratchRoot?: string;
}

/**
 * A remote worker: claims jobs over the protocol into free slots (the claim's long-poll is the
 * wait for work), runs each on the engine with runRemoteJob, and stops with a grace period. A
 * refusal of the claim itself (a revoked token, a pool or pattern the token may not use) ends it:
 * `done` rejects with the server's words.
 */
export class RemoteWorker {
  readonly #opts: RemoteWorkerOptions;
  readonly #loop: SlotLoop<ClaimedJobView>;
  /** Aborted by stop(): the pending long-poll ends and no claim follows. */
  readonly #stopping = new AbortController();
  #failures = 0;
  #fatal: ((err: Error) => void) | undefined;
  readonly done: Promise<void>;
  #resolveDone: (() => void) | undefined;

  constructor(opts: RemoteWorkerOptions) {
    this.#opts = opts;
    const { log } = opts;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#fatal = reject;
    });
    // Whoever waits on `done` sees the refusal; nobody waiting is not an unhandled rejection.
    this.done.catch(() => undefined);
    const deps = { client: opts.client, engine: opts.engine, clock: opts.clock, log, inputs: opts.inputs, ...(opts.scratchRoot ? { scratchRoot: opts.scratchRoot } : {}) };
    this.#loop = new SlotLoop<ClaimedJobView>(
      {
        batch: 32,
        claim: (max) => this.#claim(max),
        run: (job, hardStop) => runRemoteJob(job, deps, hardStop),
        failed: (job, err) => log.error({ jobId: job.id, err: { message: (err as Error).message } }, 'job run failed'),
      },
      // The long-poll is the wait for work; the poll is only the backstop while every slot is busy.
      { concurrency: opts.concurrency, pollMs: 1000, clock: opts.clock },
    );
  }

  get running(): number {
    return this.#loop.running;
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops claiming, lets running jobs finish for `graceMs`, then hands the rest back to the queue. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping.abort();
    await this.#loop.stop({ graceMs });
    this.#resolveDone?.();
  }

  async #claim(max: number): Promise<readonly ClaimedJobView[]> {
    const { client, clock, log } = this.#opts;
    const signal = this.#stopping.signal;
    if (signal.aborted) return [];
    const started = clock.nowMs();
    try {
      const jobs = await client.claim(
        {
          max,
          wait_ms: this.#opts.waitMs ?? 20_000,
          // A copy: the claim's body type (remote-views.ts's Static) has mutable arrays.
          ...(this.#opts.models?.length ? { models: [...this.#opts.models] } : {}),
          ...(this.#opts.pool ? { pool: this.#opts.pool } : {}),
          ...(this.#opts.workerId ? { worker_id: this.#opts.workerId } : {}),
        },
        signal,
      );
      if (this.#failures > 0) log.info({ failedClaims: this.#failures }, 'the server answers claims again');
      this.#failures = 0;
      // An empty answer that came at once (a server that does not hold claims) is not asked again at once.
      const gap = this.#opts.minClaimGapMs ?? 1000;
      if (jobs.length === 0) await clock.sleep(gap - (clock.nowMs() - started), signal).catch(() => undefined);
      // Claim again without waiting for the poll: the next long-poll is the wait.
      if (jobs.length < max) this.#loop.poke();
      return jobs;
    } catch (err) {
      if (signal.aborted) return [];
      if (err instanceof ProtocolError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) {
        log.error({ status: err.status, err: { message: err.message } }, 'the server refused the claim; stopping');
        this.#stopping.abort();
        this.#fatal?.(err);
        return [];
      }
      this.#failures++;
      const wait = backoffMs(this.#failures, 500, this.#opts.maxClaimBackoffMs ?? 30_000);
      if (this.#failures === 1 || this.#failures % 10 === 0) {
        log.warn({ failedClaims: this.#failures, retryInMs: wait, err: { message: (err as Error).message } }, 'claiming failed; retrying');
      }
      await clock.sleep(wait, signal).catch(() => undefined);
      this.#loop.poke();
      return [];
    }
  }
}
