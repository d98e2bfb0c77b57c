import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { Database, JobTagsTable, JobsTable } from '../schema.js';
import type { JobRecord, NewJob } from '../job-store.js';
import { toJobRecord } from './job-rows.js';
import { PreparedQuery } from './prepared-query.js';

/** The columns a new job is written with; the others start at their defaults (`newRow`). */
const COLUMNS = ['id', 'workspace_id', 'api_user_id', 'type', 'status', 'request', 'webhook_url', 'zero_data_retention', 'created_by', 'request_id', 'tags'] as const;

function newRow(job: NewJob, createdAt: number): Selectable<JobsTable> {
  return {
    id: job.id,
    workspace_id: job.workspaceId,
    api_user_id: job.apiUserId,
    type: job.type,
    status: job.status,
    created_at: createdAt,
    updated_at: createdAt,
    completed_at: null,
    request: JSON.stringify(job.request),
    webhook_url: job.webhookUrl,
    zero_data_retention: job.zeroDataRetention ? 1 : 0,
    result: null,
    error: null,
    lease_id: null,
    lease_expires_at: null,
    attempts: 0,
    started_at: null,
    output_key: null,
    run_after: null,
    fault_count: 0,
    created_by: job.createdBy,
    progress: null,
    request_id: job.requestId ?? null,
    outputs_expired_at: null,
    tags: job.tags && job.tags.length > 0 ? job.tags.join(',') : null,
  };
}

type NewRow = Selectable<JobsTable> & { readonly back: number };
type ClockArgs = { userId: string; k: number; now: number; end: number };

/** The user's clock moved past its k new jobs (see insertJobs). */
const advanceClock = (db: Kysely<Database>, a: ClockArgs) =>
  db
    .updateTable('api_users')
    .set({ last_job_us: sql<number>`CASE WHEN last_job_us + ${a.k} > CAST(${a.now} AS BIGINT) THEN last_job_us + ${a.k} ELSE CAST(${a.end} AS BIGINT) END` })
    .where('id', '=', a.userId)
    .returning('last_job_us');

const ADVANCE_CLOCK = new PreparedQuery((db, { args }: { args: ClockArgs }) => advanceClock(db, args).compile());

/** PostgreSQL: one user's jobs and its clock in one statement; `back` is each row's distance below the user's newest time. */
const INSERT_FUSED = new PreparedQuery(
  (db, { args, row }: { args: ClockArgs; row: (i: number) => NewRow }, count: number) => {
    const values = sql.join(Array.from({ length: count }, (_, i) => sql`(${sql.join(COLUMNS.map((c) => row(i)[c]))}, ${row(i).back})`));
    return sql<{ id: string; created_at: number }>`
      WITH u AS (${advanceClock(db, args)})
      INSERT INTO jobs (${sql.join(COLUMNS.map((c) => sql.ref(c)))}, created_at, updated_at)
      SELECT v.id, v.workspace_id, v.api_user_id, v.type, v.status, v.request, v.webhook_url, CAST(v.zero_data_retention AS INTEGER),
             v.created_by, v.request_id, v.tags, u.last_job_us - CAST(v.back AS BIGINT), u.last_job_us - CAST(v.back AS BIGINT)
      FROM (VALUES ${values}) AS v(${sql.join(COLUMNS.map((c) => sql.ref(c)))}, back) CROSS JOIN u
      RETURNING id, created_at`.compile(db);
  },
  String,
);

/** The new rows' written columns; the others start at their defaults, as in INSERT_FUSED. */
const INSERT_ROWS = new PreparedQuery(
  (db, { row }: { row: (i: number) => Selectable<JobsTable> }, count: number) =>
    db
      .insertInto('jobs')
      .values(
        Array.from({ length: count }, (_, i) => {
          const r = row(i);
          return {
            id: r.id,
            workspace_id: r.workspace_id,
            api_user_id: r.api_user_id,
            type: r.type,
            status: r.status,
            request: r.request,
            webhook_url: r.webhook_url,
            zero_data_retention: r.zero_data_retention,
            created_by: r.created_by,
            request_id: r.request_id,
            tags: r.tags,
            attempts: r.attempts,
            fault_count: r.fault_count,
            created_at: r.created_at,
            updated_at: r.updated_at,
          } satisfies Pick<Selectable<JobsTable>, (typeof COLUMNS)[number] | 'attempts' | 'fault_count' | 'created_at' | 'updated_at'>;
        }),
      )
      .compile(),
  String,
);

type TagRow = Selectable<JobTagsTable>;

/** The tag rows of the batch's tagged jobs (0023), after the jobs they name. */
const INSERT_TAGS = new PreparedQuery(
  (db, { row }: { row: (i: number) => TagRow }, count: number) =>
    db
      .insertInto('job_tags')
      .values(
        Array.from({ length: count }, (_, i) => {
          const r = row(i);
          return { job_id: r.job_id, tag: r.tag, api_user_id: r.api_user_id, created_at: r.created_at };
        }),
      )
      .compile(),
  String,
);

/**
 * Stores jobs, in the order given, with one statement per API user on PostgreSQL (`fused`: the
 * clock's UPDATE inside the INSERT's WITH) and two in all plus one per user on SQLite, then one for
 * the tag rows of the tagged jobs among them, if any. Call it in a write transaction.
 *
 * The API user's creation clock: its k new jobs take the k microseconds after its newest job, or
 * end at `now + k - 1` if that is later, so creation times per user are strictly increasing (a time
 * cursor is exact) and keep the given order. The user's row lock (PostgreSQL) or the write lock
 * (SQLite) serialises concurrent creators; users are advanced in id order, the same order in every
 * transaction.
 */
export async function insertJobs(db: Kysely<Database>, jobs: readonly NewJob[], now: number, fused: boolean): Promise<JobRecord[]> {
  const byUser = new Map<string, NewJob[]>();
  for (const job of jobs) {
    const own = byUser.get(job.apiUserId);
    if (own) own.push(job);
    else byUser.set(job.apiUserId, [job]);
  }
  const created = new Map<string, Selectable<JobsTable>>();
  const pending: Selectable<JobsTable>[] = [];
  for (const [userId, own] of [...byUser].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const k = own.length;
    const clock: ClockArgs = { userId, k, now, end: now + k - 1 };
    if (fused) {
      const rows = own.map((job, i): NewRow => ({ ...newRow(job, 0), back: k - 1 - i }));
      const result = await INSERT_FUSED.execute(db, clock, k, rows);
      if (result.rows.length !== k) throw new Error(`API user ${userId} vanished`);
      const at = new Map(result.rows.map((x) => [x.id, Number(x.created_at)]));
      for (const { back: _, ...row } of rows) {
        const createdAt = at.get(row.id)!;
        created.set(row.id, { ...row, created_at: createdAt, updated_at: createdAt });
      }
      continue;
    }
    const advanced = (await ADVANCE_CLOCK.execute(db, clock, undefined)).rows[0];
    if (!advanced) throw new Error(`API user ${userId} vanished`);
    own.forEach((job, i) => {
      const row = newRow(job, Number(advanced.last_job_us) - (k - 1 - i));
      created.set(row.id, row);
      pending.push(row);
    });
  }
  if (pending.length > 0) await INSERT_ROWS.execute(db, {}, pending.length, pending);
  // Only tagged jobs write here: a create without tags runs no statement more than before.
  const tags = jobs.flatMap((job) => (job.tags ?? []).map((tag) => ({ job_id: job.id, tag, api_user_id: job.apiUserId, created_at: created.get(job.id)!.created_at })));
  if (tags.length > 0) await INSERT_TAGS.execute(db, {}, tags.length, tags);
  return jobs.map((job) => toJobRecord(created.get(job.id)!));
}
