import { sql } from 'kysely';
import type { Kysely, Selectable, UpdateObject } from 'kysely';
import { ACTIVE_STATUSES, MOVES, RUNNING_STATUSES, isTerminal } from '../../domain/states.js';
import type { MoveRule } from '../../domain/states.js';
import { sealLock } from '../locked-workspace.js';
import type { LockedWorkspace } from '../locked-workspace.js';
import type { Database, JobsTable } from '../schema.js';
import type { JobRecord } from '../job-store.js';
import type { JobMove, NewClaim, NewClaims, OverdueCutoff } from '../queue-inputs.js';
import type { AdmissionCounts, AdmissionLock, JobEvent, JobMoveName, QueueStore } from '../queue-store.js';
import { JOB_COLUMNS, toJobRecord } from './job-rows.js';

/** Sends an event to other processes, delivered when the transaction `db` belongs to commits. */
export type EventSender = (db: Kysely<Database>, event: JobEvent) => Promise<void>;

/** What the backend can do that the shared queries ask for (Kysely's habit: capabilities, not dialect tests). */
export interface QueueCaps {
  /** Claims can pass each other's row locks (FOR UPDATE SKIP LOCKED). */
  readonly skipLocked: boolean;
  /** Writers take row locks (PostgreSQL); SQLite's write transaction is serial for the whole file. */
  readonly rowLocks: boolean;
  /** Absent where events reach other processes after the commit instead (SQLite's wake sockets). */
  readonly sendEvent?: EventSender;
}

/**
 * The runner's queries (graphile-worker's habit: each state change is its own small query, and the
 * runner never builds SQL). The guard of every status write is the named move's `from` in
 * domain/states.ts. Backend differences are capabilities: PostgreSQL claims with FOR UPDATE SKIP
 * LOCKED so concurrent claimers pass each other (SQLite's write lock already makes the claim
 * serial), and it carries events to other processes (store/postgres/pg-notify.ts).
 */
export class SqlQueueStore implements QueueStore {
  readonly #db: Kysely<Database>;
  readonly #caps: QueueCaps;
  readonly #announce: (event: JobEvent) => void;

  /** `announce` hands the event to this process's listeners, at commit when in a transaction. */
  constructor(db: Kysely<Database>, caps: QueueCaps, announce: (event: JobEvent) => void) {
    this.#db = db;
    this.#caps = caps;
    this.#announce = announce;
  }

  async notify(event: JobEvent): Promise<void> {
    await this.#caps.sendEvent?.(this.#db, event);
    this.#announce(event);
  }

  async lockWorkspace(workspaceId: string): Promise<LockedWorkspace | undefined> {
    // A read, never a write: SQLite's write transaction (BEGIN IMMEDIATE) is serial already, and
    // PostgreSQL takes the row lock an UPDATE would take (FOR NO KEY UPDATE: FK checks of inserts
    // into child tables pass it). The old no-op `UPDATE workspaces SET id = id` made SQLite check
    // every child row referencing the workspace, so a create grew with the workspace's history
    // (docs/benchmarks.md), and left a dead row version per create on PostgreSQL.
    const q = this.#db
      .selectFrom('workspaces')
      .select(['max_concurrent_jobs', 'max_backlogged_jobs'])
      .where('id', '=', workspaceId);
    const r = await (this.#caps.rowLocks ? q.forNoKeyUpdate() : q).executeTakeFirst();
    return r && sealLock(workspaceId, { maxConcurrentJobs: Number(r.max_concurrent_jobs), maxBackloggedJobs: Number(r.max_backlogged_jobs) });
  }

  async lockForAdmission(workspaceId: string): Promise<AdmissionLock | undefined> {
    // The lock, the counts and the balance in one statement: one round trip per workspace of a
    // batch of creates. Only the workspace row is locked (FOR NO KEY UPDATE OF w); the balance is
    // written only under this lock (top-ups add to it, which an older reading never overspends).
    const q = this.#db
      .selectFrom('workspaces as w')
      .leftJoin('balances as b', 'b.workspace_id', 'w.id')
      .select(['w.max_concurrent_jobs', 'w.max_backlogged_jobs', 'w.active_jobs', 'w.backlogged_jobs', 'b.balance_micros', 'b.held_micros'])
      .where('w.id', '=', workspaceId);
    const r = await (this.#caps.rowLocks ? q.forNoKeyUpdate('w') : q).executeTakeFirst();
    if (!r) return undefined;
    return {
      lock: sealLock(workspaceId, { maxConcurrentJobs: Number(r.max_concurrent_jobs), maxBackloggedJobs: Number(r.max_backlogged_jobs) }),
      counts: { active: Number(r.active_jobs), backlogged: Number(r.backlogged_jobs) },
      balance: r.balance_micros === null || r.held_micros === null ? undefined : { balanceMicros: Number(r.balance_micros), heldMicros: Number(r.held_micros) },
    };
  }

  async admissionCounts(workspaceId: string): Promise<AdmissionCounts> {
    // Kept by migration 0018's triggers in the statement that moves a job: no rows are counted.
    const r = await this.#db
      .selectFrom('workspaces')
      .select(['active_jobs', 'backlogged_jobs'])
      .where('id', '=', workspaceId)
      .executeTakeFirst();
    return { active: Number(r?.active_jobs ?? 0), backlogged: Number(r?.backlogged_jobs ?? 0) };
  }

  async claim(c: NewClaim): Promise<JobRecord | undefined> {
    const { leaseId, outputKey, ...rest } = c;
    return (await this.claimMany({ ...rest, leases: [{ leaseId, outputKey }] }))[0];
  }

  async claimMany(c: NewClaims): Promise<JobRecord[]> {
    // A filter naming no type takes nothing: no query at all.
    if (c.leases.length === 0 || (c.types && 'only' in c.types && c.types.only.length === 0)) return [];
    // One statement: pick the oldest queued jobs and take them, guarded by their status; the n-th
    // oldest gets the n-th lease (a CTE's VALUES, which both backends name the same way).
    const { from, to } = MOVES.claim;
    const oldest = this.#db
      .selectFrom('jobs')
      .select(['id', 'created_at'])
      .where('status', 'in', from)
      // A job handed back for an infrastructure fault waits out its backoff.
      .where((w) => w.or([w('run_after', 'is', null), w('run_after', '<=', c.now)]))
      .$call((q) => {
        const t = c.types;
        if (!t) return q;
        if ('only' in t) return q.where('type', 'in', [...t.only]);
        return t.except.length > 0 ? q.where('type', 'not in', [...t.except]) : q;
      })
      // A status change sets updated_at, so a queued job's updated_at is when it became queued.
      .$call((q) => (c.queuedBefore === undefined ? q : q.where('updated_at', '<=', c.queuedBefore)))
      .orderBy('created_at')
      .orderBy('id')
      .limit(c.leases.length);
    const picked = this.#caps.skipLocked ? oldest.forUpdate().skipLocked() : oldest;
    const leases = sql.join(c.leases.map((l, i) => sql`(CAST(${i + 1} AS INTEGER), ${l.leaseId}, ${l.outputKey})`));
    const { rows } = await sql<Selectable<JobsTable>>`
      WITH lease(n, lease_id, output_key) AS (VALUES ${leases})
      UPDATE jobs SET
        status = ${to}, lease_id = p.lease_id, lease_expires_at = ${c.leaseExpiresAt}, attempts = attempts + 1,
        started_at = COALESCE(started_at, ${c.now}), output_key = COALESCE(jobs.output_key, p.output_key),
        run_after = NULL, progress = NULL, updated_at = ${c.now}
      FROM (
        SELECT o.id, lease.lease_id, lease.output_key
        FROM (SELECT x.id, ROW_NUMBER() OVER (ORDER BY x.created_at, x.id) AS n FROM (${picked}) AS x) AS o
        JOIN lease ON lease.n = o.n
      ) AS p
      WHERE jobs.id = p.id AND jobs.status IN (${sql.join(from)})
      RETURNING ${sql.raw(JOB_COLUMNS.map((col) => `jobs.${col}`).join(', '))}`.execute(this.#db);
    const claimed = rows.map(toJobRecord).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const job of claimed) this.#changed(job.id);
    return claimed;
  }

  async extendLease(id: string, leaseId: string, expiresAt: number, progress?: number): Promise<boolean> {
    const r = await this.#db
      .updateTable('jobs')
      .set({ lease_expires_at: expiresAt, ...(progress === undefined ? {} : { progress }) })
      .where('id', '=', id)
      .where('lease_id', '=', leaseId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async move<N extends JobMoveName>(name: N, m: JobMove<N>): Promise<JobRecord | undefined> {
    const rule: MoveRule = MOVES[name];
    const p = m.patch ?? {};
    const set: UpdateObject<Database, 'jobs'> = { status: rule.to, updated_at: m.now };
    if (p.result !== undefined) set.result = p.result === null ? null : JSON.stringify(p.result);
    if (p.error !== undefined) set.error = p.error === null ? null : JSON.stringify(p.error);
    if (!RUNNING_STATUSES.includes(rule.to)) {
      // A lease exists only while its job runs.
      set.lease_id = null;
      set.lease_expires_at = null;
    }
    if (isTerminal(rule.to)) {
      set.completed_at = p.completedAt ?? m.now;
      // Zero data retention: the prompt and inputs go in the same write that ends the job.
      set.request = sql<string>`CASE WHEN zero_data_retention = 1 THEN '{}' ELSE request END`;
    }
    if (p.faultRetryAt !== undefined) {
      set.run_after = p.faultRetryAt;
      set.fault_count = sql<number>`fault_count + 1`;
    }
    if (p.uncountAttempt) set.attempts = sql<number>`attempts - 1`;
    let q = this.#db.updateTable('jobs').set(set).where('id', '=', m.id).where('status', 'in', rule.from);
    if (m.unchangedSince !== undefined) q = q.where('updated_at', '<=', m.unchangedSince);
    if (rule.lease === 'holder') {
      // The type makes holder moves carry a lease; this refuses one that slipped through a cast.
      if (typeof m.leaseId !== 'string') throw new Error(`move '${name}' requires the worker's lease`);
      q = q.where('lease_id', '=', m.leaseId);
    }
    const r = await q.returningAll().executeTakeFirst();
    if (r) this.#changed(r.id);
    return r && toJobRecord(r);
  }

  /**
   * A status changed: its waiters (Prefer: wait, SSE) hear it. This process's at the commit; the
   * other processes' through SQLite's wake sockets (the store's `publish`) or, on PostgreSQL, the
   * NOTIFY the status trigger sends in the same transaction (migration 0015), so no extra round trip.
   */
  #changed(jobId: string): void {
    this.#announce({ kind: 'changed', jobId });
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

  async overdueJobs(cutoffs: readonly OverdueCutoff[], limit: number): Promise<JobRecord[]> {
    // One query per remote-bound type, each a walk of jobs_status_type_created over that type's
    // active jobs only: a deep backlog of other types (local ones) costs nothing here.
    const found: JobRecord[] = [];
    for (const c of cutoffs) {
      const rows = await this.#db
        .selectFrom('jobs')
        .selectAll()
        .where('status', 'in', [...ACTIVE_STATUSES])
        .where('type', '=', c.type)
        .where((w) => w.or([w('started_at', '<', c.before), w.and([w('status', '=', 'queued'), w('updated_at', '<', c.before)])]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      found.push(...rows.map(toJobRecord));
    }
    return found.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
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
