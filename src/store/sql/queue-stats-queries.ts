import type { Kysely } from 'kysely';
import { NON_TERMINAL_STATUSES, RUNNING_STATUSES } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';
import type { QueueStatsStore, TypeQueue } from '../queue-stats.js';
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

  async queueByType(): Promise<TypeQueue[]> {
    // The counts read jobs_status_type_created only (status and type are its leading columns).
    const rows = await this.#db
      .selectFrom('jobs')
      .select((eb) => ['status', 'type', eb.fn.countAll<number | string>().as('n')])
      .where('status', 'in', ['queued', ...RUNNING_STATUSES])
      .groupBy(['status', 'type'])
      .execute();
    const byType = new Map<string, { waiting: number; running: number }>();
    for (const r of rows) {
      const q = byType.get(r.type) ?? { waiting: 0, running: 0 };
      if (r.status === 'queued') q.waiting += Number(r.n);
      else q.running += Number(r.n);
      byType.set(r.type, q);
    }
    const out: TypeQueue[] = [];
    for (const [type, q] of [...byType].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      // The first entry of the type's queued range of the same index: one seek, at any depth.
      const oldest =
        q.waiting === 0
          ? undefined
          : await this.#db.selectFrom('jobs').select('created_at').where('status', '=', 'queued').where('type', '=', type).orderBy('created_at').limit(1).executeTakeFirst();
      out.push({ type, waiting: q.waiting, running: q.running, oldestWaitingCreatedAt: oldest ? Number(oldest.created_at) : null });
    }
    return out;
  }
}
