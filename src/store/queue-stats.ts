import type { JobStatus } from '../domain/states.js';

/** Read-only figures about the whole queue, for the metrics (not for any decision a service makes). */
export interface QueueStatsStore {
  /**
   * How many jobs are in each status that has not ended, over every workspace: one grouped count
   * along the status index. Statuses with no job are absent from the map.
   */
  depthByStatus(): Promise<Map<JobStatus, number>>;
}
