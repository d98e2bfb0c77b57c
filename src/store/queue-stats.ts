import type { JobStatus } from '../domain/states.js';
import type { Micros } from '../lib/time.js';

/** One job type's queue: the jobs waiting to be claimed, the oldest of them, and the jobs running. */
export interface TypeQueue {
  readonly type: string;
  /** Jobs `queued` (backlogged ones wait for their workspace's own slots, not for a worker). */
  readonly waiting: number;
  /** Creation time of the oldest queued job; null when none waits. */
  readonly oldestWaitingCreatedAt: Micros | null;
  /** Jobs in RUNNING_STATUSES. */
  readonly running: number;
  /** The running jobs by the engine their route records (the router's hand-over, a remote claim); null: none recorded. */
  readonly runningOn: readonly { readonly engine: string | null; readonly n: number }[];
}

/** Read-only figures about the whole queue, for the metrics (not for any decision a service makes). */
export interface QueueStatsStore {
  /**
   * How many jobs are in each status that has not ended, over every workspace: one grouped count
   * along the status index. Statuses with no job are absent from the map.
   */
  depthByStatus(): Promise<Map<JobStatus, number>>;
  /**
   * Each job type with jobs waiting or running (the signals to scale workers on, issue 40): a
   * grouped count along jobs_status_type_created over the queued jobs, the running ones (as many as
   * the workers' slots) with their recorded route's engine, then one index seek per type for its
   * oldest queued job. Never a walk of the finished history.
   */
  queueByType(): Promise<TypeQueue[]>;
}
