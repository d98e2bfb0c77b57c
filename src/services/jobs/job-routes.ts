import type { RouteStep } from '../../engines/engine.js';
import type { Clock } from '../../lib/clock.js';
import { msToMicros } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import type { ClaimedJob } from './job-runs.js';
import { HELD, lost, lostWhy } from './run-outcomes.js';
import type { Held, Lost } from './run-outcomes.js';

/** A job's route as its details show it (owners and admins): every engine tried, in order, and the one that took it. */
export interface RouteView {
  readonly engine: string | null;
  readonly tried: readonly RouteStep[];
}

/**
 * Routing's writes for an in-process run (docs/routing.md): the places a job holds on engines with
 * `max_in_flight`, counted in the store so the cap holds across processes, and the route the
 * router took, written under the run's lease.
 */
export class JobRoutes {
  readonly #store: Store;
  readonly #clock: Clock;

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  acquire(job: ClaimedJob, engine: string, max: number): Promise<boolean> {
    return this.#store.routes.acquireSlot(engine, job.id, job.leaseId, max, msToMicros(this.#clock.nowMs()));
  }

  release(job: ClaimedJob): Promise<void> {
    return this.#store.routes.releaseSlot(job.id);
  }

  async record(job: ClaimedJob, trail: readonly RouteStep[], engine: string | null): Promise<Held | Lost> {
    if (await this.#store.routes.save({ jobId: job.id, engine, trail: trail as unknown as Record<string, unknown>[], updatedAt: msToMicros(this.#clock.nowMs()) }, job.leaseId)) return HELD;
    return lost(lostWhy(await this.#store.queue.findJob(job.id)));
  }

  /** The job's route, when its model's chain or limits made one; undefined: it ran on its one engine. */
  async of(jobId: string): Promise<RouteView | undefined> {
    const rec = await this.#store.routes.find(jobId);
    return rec && { engine: rec.engine, tried: rec.trail as unknown as RouteStep[] };
  }
}
