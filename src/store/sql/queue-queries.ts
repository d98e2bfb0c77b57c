import { sql } from 'kysely';
import type { Kysely, UpdateObject } from 'kysely';
import type { Database } from '../schema.js';
import type { JobEvent, JobMove, JobRecord, NewClaim, QueueStore, WorkspaceLimits } from '../store.js';
import { toJobRecord } from './job-queries.js';

/** The PostgreSQL channel that carries JobEvents between processes. */
export const JOB_EVENTS_CHANNEL = 'mediagen_jobs';

/**
 * The runner's queries (graphile-worker's habit: each state change is its own small query, and the
 * runner never builds SQL). The only backend difference is a capability: PostgreSQL claims with
 * FOR UPDATE SKIP LOCKED so concurrent claimers pass each other; SQLite's write lock already makes
 * the claim serial; and it carries events to other processes with NOTIFY, delivered at commit.
 */
export class SqlQueueStore implements QueueStore {
  readonly #db: Kysely<Database>;
  readonly #skipLocked: boolean;
  readonly #notifies: boolean;
  readonly #announce: (event: JobEvent) => void;

  /** `announce` hands the event to this process's listeners, at commit when in a transaction. */
  constructor(db: Kysely<Database>, caps: { skipLocked: boolean; notifies: boolean }, announce: (event: JobEvent) => void) {
    this.#db = db;
    this.#skipLocked = caps.skipLocked;
    this.#notifies = caps.notifies;
    this.#announce = announce;
  }

  async notify(event: JobEvent): Promise<void> {
    if (this.#notifies) await sql`SELECT pg_notify(${JOB_EVENTS_CHANNEL}, ${JSON.stringify(event)})`.execute(this.#db);
    this.#announce(event);
  }

  async lockWorkspace(workspaceId: string): Promise<WorkspaceLimits | undefined> {
    // A read, never a write: SQLite's write transaction (BEGIN IMMEDIATE) is serial already, and
    // PostgreSQL takes the row lock an UPDATE would take (FOR NO KEY UPDATE: FK checks of inserts
    // into child tables pass it). The old no-op `UPDATE workspaces SET id = id` made SQLite check
    // every child row referencing the workspace, so a create grew with the workspace's history
    // (docs/benchmarks.md), and left a dead row version per create on PostgreSQL.
    const q = this.#db
      .selectFrom('workspaces')
      .select(['max_concurrent_jobs', 'max_backlogged_jobs'])
      .where('id', '=', workspaceId);
    const r = await (this.#skipLocked ? q.forNoKeyUpdate() : q).executeTakeFirst();
    return r && { maxConcurrentJobs: Number(r.max_concurrent_jobs), maxBackloggedJobs: Number(r.max_backlogged_jobs) };
  }

  async countJobs(workspaceId: string, statuses: readonly string[], atMost: number): Promise<number> {
    // Admission only asks "fewer than the limit?": counting stops there, so a deep queue costs
    // nothing more (docs/benchmarks.md measured create time growing with the queue without it).
    const r = await this.#db
      .selectFrom((db) =>
        db
          .selectFrom('jobs')
          .select(sql<number>`1`.as('one'))
          .where('workspace_id', '=', workspaceId)
          .where('status', 'in', [...statuses])
          .limit(atMost)
          .as('capped'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async claim(c: NewClaim): Promise<JobRecord | undefined> {
    // One statement: pick the oldest queued job and take it, guarded by its status.
    const r = await this.#db
      .updateTable('jobs')
      .set({
        status: 'scheduled',
        lease_id: c.leaseId,
        lease_expires_at: c.leaseExpiresAt,
        attempts: sql<number>`attempts + 1`,
        started_at: sql<number>`COALESCE(started_at, ${c.now})`,
        output_key: sql<string>`COALESCE(output_key, ${c.outputKey})`,
        run_after: null,
        updated_at: c.now,
      })
      .where('id', '=', (eb) => {
        const oldest = eb
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 'queued')
          // A job handed back for an infrastructure fault waits out its backoff.
          .where((w) => w.or([w('run_after', 'is', null), w('run_after', '<=', c.now)]))
          .orderBy('created_at')
          .orderBy('id')
          .limit(1);
        return this.#skipLocked ? oldest.forUpdate().skipLocked() : oldest;
      })
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    return r && toJobRecord(r);
  }

  async extendLease(id: string, leaseId: string, expiresAt: number): Promise<boolean> {
    const r = await this.#db
      .updateTable('jobs')
      .set({ lease_expires_at: expiresAt })
      .where('id', '=', id)
      .where('lease_id', '=', leaseId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async moveJob(m: JobMove): Promise<JobRecord | undefined> {
    const p = m.patch ?? {};
    const set: UpdateObject<Database, 'jobs'> = { status: m.to, updated_at: m.now };
    if (p.result !== undefined) set.result = p.result === null ? null : JSON.stringify(p.result);
    if (p.error !== undefined) set.error = p.error === null ? null : JSON.stringify(p.error);
    if (p.completedAt !== undefined) set.completed_at = p.completedAt;
    if (p.clearLease) {
      set.lease_id = null;
      set.lease_expires_at = null;
    }
    if (p.eraseRequest) set.request = '{}';
    if (p.faultRetryAt !== undefined) {
      set.run_after = p.faultRetryAt;
      set.fault_count = sql<number>`fault_count + 1`;
    }
    let q = this.#db.updateTable('jobs').set(set).where('id', '=', m.id).where('status', 'in', [...m.from]);
    if (m.leaseId !== undefined) q = q.where('lease_id', '=', m.leaseId);
    const r = await q.returningAll().executeTakeFirst();
    return r && toJobRecord(r);
  }

  async expiredLeases(now: number, limit: number): Promise<JobRecord[]> {
    const rows = await this.#db
      .selectFrom('jobs')
      .selectAll()
      .where('lease_expires_at', '<', now)
      .orderBy('lease_expires_at')
      .limit(limit)
      .execute();
    return rows.map(toJobRecord);
  }

  async oldestBacklogged(workspaceId: string, limit: number): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('jobs')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', 'backlogged')
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  async workspacesWithBacklog(): Promise<string[]> {
    const rows = await this.#db.selectFrom('jobs').select('workspace_id').distinct().where('status', '=', 'backlogged').execute();
    return rows.map((r) => r.workspace_id);
  }

  async findJob(id: string): Promise<JobRecord | undefined> {
    const r = await this.#db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toJobRecord(r);
  }
}
