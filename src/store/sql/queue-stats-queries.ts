import type { Kysely } from 'kysely';
import { NON_TERMINAL_STATUSES } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';
import type { QueueStatsStore } from '../queue-stats.js';
import type { Database } from '../schema.js';

export class SqlQueueStatsStore implements QueueStatsStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async depthByStatus(): Promise<Map<JobStatus, number>> {
    // Only statuses that have not ended: a range of jobs_status_created, never the finished history.
    const rows = await this.#db
      .selectFrom('jobs')
      .select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
      .where('status', 'in', [...NON_TERMINAL_STATUSES])
      .groupBy('status')
      .execute();
    return new Map(rows.map((r) => [r.status as JobStatus, Number(r.n)]));
  }
}
