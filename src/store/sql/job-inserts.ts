import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { Database, JobsTable } from '../schema.js';
import type { JobRecord, NewJob } from '../job-store.js';
import { toJobRecord } from './job-rows.js';

/** The columns a new job is written with; the others start at their defaults (`newRow`). */
const COLUMNS = ['id', 'workspace_id', 'api_user_id', 'type', 'status', 'request', 'webhook_url', 'zero_data_retention', 'created_by', 'request_id'] as const;

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
  };
}

/**
 * Stores jobs, in the order given, with one statement per API user on PostgreSQL (`fused`: the
 * clock's UPDATE inside the INSERT's WITH) and two in all plus one per user on SQLite. Call it in a
 * write transaction.
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
    const advanced = sql<number>`CASE WHEN last_job_us + ${k} > CAST(${now} AS BIGINT) THEN last_job_us + ${k} ELSE CAST(${now + k - 1} AS BIGINT) END`;
    if (fused) {
      const rows = own.map((job, i) => newRow(job, k - 1 - i));
      // `created_at` carries each row's distance below the user's newest time until the SELECT.
      const values = sql.join(rows.map((r) => sql`(${sql.join(COLUMNS.map((c) => r[c]))}, ${r.created_at})`));
      const result = await sql<{ id: string; created_at: number }>`
        WITH u AS (${db.updateTable('api_users').set({ last_job_us: advanced }).where('id', '=', userId).returning('last_job_us')})
        INSERT INTO jobs (${sql.join(COLUMNS.map((c) => sql.ref(c)))}, created_at, updated_at)
        SELECT v.id, v.workspace_id, v.api_user_id, v.type, v.status, v.request, v.webhook_url, CAST(v.zero_data_retention AS INTEGER),
               v.created_by, v.request_id, u.last_job_us - CAST(v.back AS BIGINT), u.last_job_us - CAST(v.back AS BIGINT)
        FROM (VALUES ${values}) AS v(${sql.join(COLUMNS.map((c) => sql.ref(c)))}, back) CROSS JOIN u
        RETURNING id, created_at`.execute(db);
      if (result.rows.length !== k) throw new Error(`API user ${userId} vanished`);
      for (const r of rows) {
        const at = Number(result.rows.find((x) => x.id === r.id)!.created_at);
        created.set(r.id, { ...r, created_at: at, updated_at: at });
      }
      continue;
    }
    const { last_job_us } = await db.updateTable('api_users').set({ last_job_us: advanced }).where('id', '=', userId).returning('last_job_us').executeTakeFirstOrThrow();
    own.forEach((job, i) => {
      const row = newRow(job, Number(last_job_us) - (k - 1 - i));
      created.set(row.id, row);
      pending.push(row);
    });
  }
  if (pending.length > 0) await db.insertInto('jobs').values(pending).execute();
  return jobs.map((job) => toJobRecord(created.get(job.id)!));
}
