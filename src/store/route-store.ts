import type { Micros } from '../lib/time.js';

/** A job's route through its chain as stored (docs/routing.md): the engine that took it, and every step. */
export interface RouteRecord {
  readonly jobId: string;
  /** The engine that took the job (ran it, or failed it after accepting it); null while none has. */
  readonly engine: string | null;
  /** The steps, as the router wrote them: opaque JSON to the store. */
  readonly trail: readonly Readonly<Record<string, unknown>>[];
  readonly updatedAt: Micros;
}

export interface RouteStore {
  /** Stores the job's route while `leaseId` is its lease; false when it is not (the run lost its job). */
  save(record: RouteRecord, leaseId: string): Promise<boolean>;
  find(jobId: string): Promise<RouteRecord | undefined>;
  /**
   * Takes a place on `engine` for the job's run holding `leaseId`, when fewer than `max` other jobs
   * hold one: atomically across every process sharing the store. A place whose lease is no longer
   * its job's (the run ended, was reclaimed) is freed first. True when the job holds a place.
   */
  acquireSlot(engine: string, jobId: string, leaseId: string, max: number, now: Micros): Promise<boolean>;
  /** Frees the job's place, if it holds one. */
  releaseSlot(jobId: string): Promise<void>;
  /** The places held now on each engine (live leases only), for the metrics. */
  slotsInUse(): Promise<ReadonlyMap<string, number>>;
}
