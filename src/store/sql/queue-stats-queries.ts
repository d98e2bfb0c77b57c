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
    // The queued count reads jobs_status_type_created only (status and type are its leading columns).
    const waiting = await this.#db
      .selectFrom('jobs')
      .select((eb) => ['type', eb.fn.countAll<number | string>().as('n')])
      .where('status', '=', 'queued')
      .groupBy('type')
      .execute();
    // Running jobs are few (the workers' slots): each joins its route by primary key.
    const running = await this.#db
      .selectFrom('jobs')
      .leftJoin('job_routes', 'job_routes.job_id', 'jobs.id')
      .select((eb) => ['jobs.type', 'job_routes.engine', eb.fn.countAll<number | string>().as('n')])
      .where('jobs.status', 'in', [...RUNNING_STATUSES])
      .groupBy(['jobs.type', 'job_routes.engine'])
      .execute();
    const byType = new Map<string, { waiting: number; running: number; runningOn: { engine: string | null; n: number }[] }>();
    const of = (type: string) => byType.get(type) ?? byType.set(type, { waiting: 0, running: 0, runningOn: [] }).get(type)!;
    for (const r of waiting) of(r.type).waiting += Number(r.n);
    for (const r of running) {
      const q = of(r.type);
      q.running += Number(r.n);
      q.runningOn.push({ engine: r.engine ?? null, n: Number(r.n) });
    }
    const out: TypeQueue[] = [];
    for (const [type, q] of [...byType].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      // The first entry of the type's queued range of the same index: one seek, at any depth.
      const oldest =
        q.waiting === 0
          ? undefined
          : await this.#db.selectFrom('jobs').select('created_at').where('status', '=', 'queued').where('type', '=', type).orderBy('created_at').limit(1).executeTakeFirst();
      out.push({ type, ...q, oldestWaitingCreatedAt: oldest ? Number(oldest.created_at) : null });
    }
    return out;
  }
}
