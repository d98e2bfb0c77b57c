import { INFRA_FAULT_ALERT, runJob } from './run-job.js';
import type { RunDeps } from './run-job.js';

export interface WorkerOptions {
  /** Jobs this process runs at once. */
  readonly concurrency: number;
  /** The backstop: how often to look for work nobody signalled, expired leases and backlogs. */
  readonly pollMs: number;
}

/**
 * A process's job runner: claims jobs while it has free slots, runs each with runJob, and between
 * claims waits for a wake-up (a new job in this process, a freed slot) or the slow poll, which
 * also reaps expired leases and promotes backlogs for every process sharing the store.
 */
export class Worker {
  readonly #deps: RunDeps;
  readonly #opts: WorkerOptions;
  readonly #running = new Set<Promise<void>>();
  /** Aborted when the grace period ends: runs still going hand their jobs back. */
  readonly #hardStop = new AbortController();
  /** Aborted by stop(): no more claims, and the loop's wait ends at once. */
  readonly #stopping = new AbortController();
  #wake: AbortController = new AbortController();
  #loop: Promise<void> | undefined;
  #offQueued: (() => void) | undefined;
  /** The data dir could not take writes at the last look: claims are paused. */
  #diskPaused = false;

  constructor(deps: RunDeps, opts: WorkerOptions) {
    this.#deps = deps;
    this.#opts = opts;
  }

  get running(): number {
    return this.#running.size;
  }

  start(): void {
    if (this.#loop) return;
    this.#offQueued = this.#deps.signals.onQueued(() => this.#poke());
    this.#loop = this.#run();
  }

  /**
   * Stops claiming, lets running jobs finish for `graceMs`, then aborts the rest, which hand their
   * jobs back to the queue for another worker (or this one after a restart).
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping.abort();
    this.#offQueued?.();
    await this.#loop;
    if (this.#running.size > 0) {
      const grace = new AbortController();
      const allDone = Promise.allSettled([...this.#running]).then(() => grace.abort());
      await this.#deps.clock.sleep(graceMs, grace.signal).catch(() => undefined);
      this.#hardStop.abort();
      await allDone;
    }
  }

  #poke(): void {
    this.#wake.abort();
  }

  async #run(): Promise<void> {
    let lastMaintenance = -Infinity;
    while (!this.#stopping.signal.aborted) {
      this.#wake = new AbortController();
      if (this.#deps.clock.nowMs() - lastMaintenance >= this.#opts.pollMs) {
        lastMaintenance = this.#deps.clock.nowMs();
        await this.#maintain();
      }
      await this.#fill();
      const wait = AbortSignal.any([this.#wake.signal, this.#stopping.signal]);
      await this.#deps.clock.sleep(this.#opts.pollMs, wait).catch(() => undefined);
    }
  }

  /**
   * Claims nothing while the data dir cannot take writes: the job would only fault, and waiting in
   * the queue costs it neither an attempt nor its timeout (counted from its first claim).
   */
  async #diskAllowsClaims(): Promise<boolean> {
    const ok = (await this.#deps.readiness?.canStore()) ?? true;
    if (ok === !this.#diskPaused) return ok;
    this.#diskPaused = !ok;
    if (ok) this.#deps.log.info({ alert: INFRA_FAULT_ALERT, resolved: true }, 'the data dir takes writes again; claiming jobs');
    else this.#deps.log.error({ alert: INFRA_FAULT_ALERT, kind: 'disk' }, 'the data dir cannot take writes (disk full, read-only or below min_free_disk_bytes); claiming no jobs');
    return ok;
  }

  /** Claims until every slot is busy or the queue is empty. */
  async #fill(): Promise<void> {
    if (this.#running.size >= this.#opts.concurrency || !(await this.#diskAllowsClaims())) return;
    while (!this.#stopping.signal.aborted && this.#running.size < this.#opts.concurrency) {
      let job;
      try {
        job = await this.#deps.runs.claim();
      } catch (err) {
        this.#deps.log.error({ err: { message: (err as Error).message } }, 'claiming a job failed');
        return;
      }
      if (!job) return;
      const run: Promise<void> = runJob(job, this.#deps, this.#hardStop.signal)
        .catch((err: unknown) => this.#deps.log.error({ jobId: job.id, err: { message: (err as Error).message } }, 'job run failed'))
        .finally(() => {
          this.#running.delete(run);
          this.#poke();
        });
      this.#running.add(run);
    }
  }

  async #maintain(): Promise<void> {
    try {
      const reaped = await this.#deps.runs.reap();
      if (reaped > 0) this.#deps.log.warn({ jobs: reaped }, 'returned jobs of stopped workers to the queue');
      await this.#deps.runs.promoteAll();
    } catch (err) {
      this.#deps.log.error({ err: { message: (err as Error).message } }, 'lease and backlog maintenance failed');
    }
  }
}
