import type { Kysely } from 'kysely';
import { ACTIVE_STATUSES, MOVES } from '../../domain/states.js';
import { sealLock } from '../locked-workspace.js';
import type { LockedWorkspace } from '../locked-workspace.js';
import type { Database } from '../schema.js';
import type { JobRecord } from '../job-store.js';
import type { JobMove, NewClaim, NewClaims, OverdueCutoff } from '../queue-inputs.js';
import type { AdmissionCounts, AdmissionLock, JobEvent, JobMoveName, QueueStore } from '../queue-store.js';
import { toJobRecord } from './job-rows.js';
import { CLAIM } from './claim-statement.js';
import { ADMISSION_COUNTS, EXPIRED_LEASES, EXTEND_LEASE, OLDEST_BACKLOGGED, WORKSPACES_WITH_BACKLOG, LOCK_FOR_ADMISSION, LOCK_WORKSPACE, MOVE } from './queue-statements.js';
import type { MoveArgs, MoveShape } from './queue-statements.js';

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
    const r = (await LOCK_WORKSPACE.execute(this.#db, { workspaceId }, this.#caps.rowLocks)).rows[0];
    return r && sealLock(workspaceId, { maxConcurrentJobs: Number(r.max_concurrent_jobs), maxBackloggedJobs: Number(r.max_backlogged_jobs) });
  }

  async lockForAdmission(workspaceId: string): Promise<AdmissionLock | undefined> {
    // The lock, the counts and the balance in one statement: one round trip per workspace of a
    // batch of creates. Only the workspace row is locked (FOR NO KEY UPDATE OF w); the balance is
    // written only under this lock (top-ups add to it, which an older reading never overspends).
    const r = (await LOCK_FOR_ADMISSION.execute(this.#db, { workspaceId }, this.#caps.rowLocks)).rows[0];
    if (!r) return undefined;
    return {
      lock: sealLock(workspaceId, { maxConcurrentJobs: Number(r.max_concurrent_jobs), maxBackloggedJobs: Number(r.max_backlogged_jobs) }),
      counts: { active: Number(r.active_jobs), backlogged: Number(r.backlogged_jobs) },
      balance: r.balance_micros === null || r.held_micros === null ? undefined : { balanceMicros: Number(r.balance_micros), heldMicros: Number(r.held_micros) },
    };
  }

  async admissionCounts(workspaceId: string): Promise<AdmissionCounts> {
    const r = (await ADMISSION_COUNTS.execute(this.#db, { workspaceId }, undefined)).rows[0];
    return { active: Number(r?.active_jobs ?? 0), backlogged: Number(r?.backlogged_jobs ?? 0) };
  }

  async claim(c: NewClaim): Promise<JobRecord | undefined> {
    const { leaseId, outputKey, ...rest } = c;
    return (await this.claimMany({ ...rest, leases: [{ leaseId, outputKey }] }))[0];
  }

  async claimMany(c: NewClaims): Promise<JobRecord[]> {
    // A filter naming no type takes nothing: no query at all.
    if (c.leases.length === 0 || (c.types && 'only' in c.types && c.types.only.length === 0)) return [];
    const shape = { count: c.leases.length, types: c.types, queuedBefore: c.queuedBefore !== undefined, skipLocked: this.#caps.skipLocked };
    const args = { now: c.now, leaseExpiresAt: c.leaseExpiresAt, ...(c.queuedBefore === undefined ? {} : { queuedBefore: c.queuedBefore }) };
    const { rows } = await CLAIM.execute(this.#db, args, shape, c.leases);
    const claimed = rows.map(toJobRecord).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const job of claimed) this.#changed(job.id);
    return claimed;
  }

  async extendLease(id: string, leaseId: string, expiresAt: number, progress?: number): Promise<boolean> {
    const r = await EXTEND_LEASE.execute(this.#db, { id, leaseId, expiresAt, ...(progress === undefined ? {} : { progress }) }, progress !== undefined);
    return Number(r.numAffectedRows ?? 0) > 0;
  }

  async move<N extends JobMoveName>(name: N, m: JobMove<N>): Promise<JobRecord | undefined> {
    const p = m.patch ?? {};
    // The type makes holder moves carry a lease; this refuses one that slipped through a cast.
    if (MOVES[name].lease === 'holder' && typeof m.leaseId !== 'string') throw new Error(`move '${name}' requires the worker's lease`);
    const shape: MoveShape = {
      name,
      result: p.result !== undefined,
      error: p.error !== undefined,
      faultRetry: p.faultRetryAt !== undefined,
      uncountAttempt: p.uncountAttempt === true,
      unchangedSince: m.unchangedSince !== undefined,
    };
    const args: MoveArgs = {
      id: m.id,
      now: m.now,
      completedAt: p.completedAt ?? m.now,
      ...(p.result === undefined ? {} : { result: p.result === null ? null : JSON.stringify(p.result) }),
      ...(p.error === undefined ? {} : { error: p.error === null ? null : JSON.stringify(p.error) }),
      ...(p.faultRetryAt === undefined ? {} : { faultRetryAt: p.faultRetryAt }),
      ...(m.unchangedSince === undefined ? {} : { unchangedSince: m.unchangedSince }),
      ...(m.leaseId === undefined ? {} : { leaseId: m.leaseId }),
    };
    const r = (await MOVE.execute(this.#db, args, shape)).rows[0];
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
    const { rows } = await EXPIRED_LEASES.execute(this.#db, { now, limit }, undefined);
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
    const { rows } = await OLDEST_BACKLOGGED.execute(this.#db, { workspaceId, limit }, undefined);
    return rows.map((r) => r.id);
  }

  async workspacesWithBacklog(): Promise<string[]> {
    const { rows } = await WORKSPACES_WITH_BACKLOG.execute(this.#db, {}, undefined);
    return rows.map((r) => r.workspace_id);
  }

  async findJob(id: string): Promise<JobRecord | undefined> {
    const r = await this.#db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toJobRecord(r);
  }
}
