import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { Database, JobsTable } from '../schema.js';
import type { JobQuery, JobRecord, JobStore, NewJob } from '../store.js';
import type { Transact } from './transact.js';

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export const toJobRecord = (r: Selectable<JobsTable>): JobRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  apiUserId: r.api_user_id,
  type: r.type,
  status: r.status,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  request: JSON.parse(r.request) as Record<string, unknown>,
  webhookUrl: r.webhook_url,
  zeroDataRetention: Number(r.zero_data_retention) === 1,
  result: parse(r.result),
  error: parse(r.error),
  leaseId: r.lease_id,
  leaseExpiresAt: r.lease_expires_at === null ? null : Number(r.lease_expires_at),
  attempts: Number(r.attempts),
  startedAt: r.started_at === null ? null : Number(r.started_at),
  outputKey: r.output_key,
  runAfter: r.run_after === null ? null : Number(r.run_after),
  faultCount: Number(r.fault_count),
});

export class SqlJobStore implements JobStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;

  constructor(db: Kysely<Database>, transact: Transact) {
    this.#db = db;
    this.#transact = transact;
  }

  insertJob(job: NewJob, now: number): Promise<JobRecord> {
    return this.#transact(async (db) => {
      // One atomic statement: the row lock (PostgreSQL) or write lock (SQLite) makes concurrent
      // creations for one user take distinct, increasing times.
      const { last_job_us } = await db
        .updateTable('api_users')
        .set({
          last_job_us: sql<number>`CASE WHEN last_job_us + 1 > CAST(${now} AS BIGINT) THEN last_job_us + 1 ELSE CAST(${now} AS BIGINT) END`,
        })
        .where('id', '=', job.apiUserId)
        .returning('last_job_us')
        .executeTakeFirstOrThrow();
      const createdAt = Number(last_job_us);
      const row: Selectable<JobsTable> = {
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
      };
      await db.insertInto('jobs').values(row).execute();
      return toJobRecord(row);
    });
  }

  async getJob(apiUserId: string, id: string): Promise<JobRecord | undefined> {
    const r = await this.#db
      .selectFrom('jobs')
      .selectAll()
      .where('api_user_id', '=', apiUserId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && toJobRecord(r);
  }

  async listJobs(q: JobQuery): Promise<JobRecord[]> {
    let query = this.#db.selectFrom('jobs').selectAll().where('api_user_id', '=', q.apiUserId);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    if (q.types && q.types.length > 0) query = query.where('type', 'in', [...q.types]);
    if (q.status !== undefined) query = query.where('status', '=', q.status);
    const rows = await query.orderBy('created_at', 'desc').limit(q.limit).execute();
    return rows.map(toJobRecord);
  }

  async deleteJob(apiUserId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('jobs')
      .where('api_user_id', '=', apiUserId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async outputKeysInUse(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    // An index lookup per key (jobs_output_key): the outputs route asks this on every request.
    const rows = await this.#db
      .selectFrom('jobs')
      .select('output_key')
      .where('output_key', 'in', [...keys])
      .where('status', '<>', 'failed')
      .execute();
    return new Set(rows.map((r) => r.output_key!));
  }
}
