import { sql } from 'kysely';
import type { RawBuilder, Selectable } from 'kysely';
import { MOVES, RUNNING_STATUSES } from '../../domain/states.js';
import type { JobsTable } from '../schema.js';
import type { ClaimTypes } from '../queue-inputs.js';
import { JOB_COLUMNS } from './job-rows.js';
import { PreparedQuery } from './prepared-query.js';

/** What a claim's text depends on: how many jobs, the type filter (constants of the text) and the locking. */
export interface ClaimShape {
  readonly count: number;
  readonly types: ClaimTypes | undefined;
  readonly queuedBefore: boolean;
  /** PostgreSQL: FOR UPDATE SKIP LOCKED, and with it LATERAL, which SQLite lacks. */
  readonly skipLocked: boolean;
}

export interface ClaimArgs {
  readonly now: number;
  readonly leaseExpiresAt: number;
  readonly queuedBefore?: number;
}

export interface ClaimLease {
  readonly leaseId: string;
  readonly outputKey: string;
}

const list = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}`));
/**
 * Statuses are the state machine's constants, written into the text rather than bound: PostgreSQL
 * then estimates a generic plan as well as a custom one and, after its five trial runs, keeps the
 * generic plan of each connection's prepared claim. With them bound, every claim was planned
 * afresh (a third of a millisecond, more than running it), since a generic plan guessed at
 * `status = $1` could never look as cheap as one that knew the value.
 */
const statuses = (values: readonly string[]) => sql.join(values.map((v) => sql.lit(v)));

/**
 * The fair claim (issue 40): the highest workspace `priority` first, then, within a priority, the
 * workspace with the fewest jobs running, then the oldest job. A batch of n follows the same order
 * as n single claims: a workspace's i-th candidate counts as if its i-1 before it already ran, so
 * sorting every candidate by (priority, running + i, created_at) is the merge of the workspaces'
 * queues that one claim after another would make.
 *
 * The cost does not grow with the jobs stored: the walk is over the workspaces with admitted jobs
 * (workspaces_admitted, migration 0021), for each its running jobs (a range of
 * jobs_workspace_status that its max_concurrent_jobs bounds) and its oldest n claimable jobs (the
 * head of the same index). PostgreSQL reads the heads with LATERAL and passes rows other claimers
 * hold (SKIP LOCKED); SQLite, whose claims are serial anyway, reads them with a correlated IN.
 * The n-th picked job gets the n-th lease (a CTE's VALUES, which both backends name the same way).
 * The UPDATE's own status guard is written `(jobs.status || '')` so no status index can serve it:
 * otherwise both planners may walk every queued job (jobs_status_created) to join the few picked
 * ones, SQLite always and PostgreSQL on fresh statistics, a claim as slow as the queue is deep;
 * this way the picked ids drive the update, each job found by its key.
 */
export const CLAIM = new PreparedQuery(
  (db, { args, row }: { args: ClaimArgs; row: (i: number) => ClaimLease }, c: ClaimShape) => {
    const { from, to } = MOVES.claim;
    const filters: RawBuilder<unknown>[] = [
      sql`q.workspace_id = w.id`,
      sql`q.status IN (${statuses(from)})`,
      // A job handed back for an infrastructure fault waits out its backoff. COALESCE hides the
      // value from PostgreSQL's estimates, so a plan knowing `now` looks no cheaper than the generic one.
      sql`COALESCE(q.run_after, 0) <= ${args.now}`,
    ];
    const t = c.types;
    if (t && 'only' in t) filters.push(sql`q.type IN (${list(t.only)})`);
    else if (t && t.except.length > 0) filters.push(sql`q.type NOT IN (${list(t.except)})`);
    // A status change sets updated_at, so a queued job's updated_at is when it became queued.
    if (c.queuedBefore) filters.push(sql`q.updated_at <= ${args.queuedBefore!}`);
    const where = sql.join(filters, sql` AND `);
    const heads = c.skipLocked
      ? sql`CROSS JOIN LATERAL (SELECT q.id, q.created_at FROM jobs AS q WHERE ${where} ORDER BY q.created_at, q.id LIMIT ${sql.lit(c.count)} FOR UPDATE SKIP LOCKED) AS h`
      : // CROSS JOIN: SQLite keeps the workspaces as the outer loop, so jobs are reached only by id.
        sql`CROSS JOIN jobs AS h WHERE h.id IN (SELECT q.id FROM jobs AS q WHERE ${where} ORDER BY q.created_at, q.id LIMIT ${sql.lit(c.count)}) AND`;
    const candidates = sql`
      SELECT h.id, h.created_at, w.priority,
        (SELECT COUNT(*) FROM jobs AS r WHERE r.workspace_id = w.id AND r.status IN (${statuses(RUNNING_STATUSES)}))
          + ROW_NUMBER() OVER (PARTITION BY w.id ORDER BY h.created_at, h.id) AS load
      FROM workspaces AS w ${heads} ${c.skipLocked ? sql`WHERE` : sql``} w.active_jobs > 0`;
    const leases = sql.join(Array.from({ length: c.count }, (_, i) => sql`(${sql.lit(i + 1)}, ${row(i).leaseId}, ${row(i).outputKey})`));
    return sql<Selectable<JobsTable>>`
      WITH lease(n, lease_id, output_key) AS (VALUES ${leases})
      UPDATE jobs SET
        status = ${to}, lease_id = p.lease_id, lease_expires_at = ${args.leaseExpiresAt}, attempts = attempts + 1,
        started_at = COALESCE(started_at, ${args.now}), output_key = COALESCE(jobs.output_key, p.output_key),
        run_after = NULL, progress = NULL, updated_at = ${args.now}
      FROM (
        SELECT o.id, lease.lease_id, lease.output_key
        FROM (SELECT x.id, ROW_NUMBER() OVER (ORDER BY x.priority DESC, x.load, x.created_at, x.id) AS n FROM (${candidates}) AS x) AS o
        JOIN lease ON lease.n = o.n
      ) AS p
      WHERE jobs.id = p.id AND (jobs.status || '') IN (${statuses(from)})
      RETURNING ${sql.raw(JOB_COLUMNS.map((col) => `jobs.${col}`).join(', '))}`.compile(db);
  },
  (c) => `${c.count}:${+c.queuedBefore}:${+c.skipLocked}:${JSON.stringify(c.types ?? null)}`,
);
