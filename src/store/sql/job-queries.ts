import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { Database, JobsTable } from '../schema.js';
import type { JobHistory } from '../job-history.js';
import type { JobQuery, JobRecord, JobStore, JobSummary, NewJob } from '../job-store.js';
import { assetKeysKept } from './asset-queries.js';
import { styleKeysKept } from './style-queries.js';
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
  createdBy: r.created_by,
  progress: r.progress === null ? null : Number(r.progress),
  requestId: r.request_id,
});

/** The columns of a JobSummary: a list reads no request body (up to the body limit each) it would throw away. */
const SUMMARY_COLUMNS = ['id', 'type', 'status', 'created_at', 'completed_at', 'result', 'error'] as const;

const toJobSummary = (r: Pick<Selectable<JobsTable>, (typeof SUMMARY_COLUMNS)[number]>): JobSummary => ({
  id: r.id,
  type: r.type,
  status: r.status,
  createdAt: Number(r.created_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  result: parse(r.result),
  error: parse(r.error),
});

export class SqlJobStore implements JobStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #fusedWrites: boolean;

  /** `fusedWrites`: the backend runs an UPDATE inside a WITH (PostgreSQL), so two writes are one round trip. */
  constructor(db: Kysely<Database>, transact: Transact, fusedWrites = false) {
    this.#db = db;
    this.#transact = transact;
    this.#fusedWrites = fusedWrites;
  }

  insertJob(job: NewJob, now: number): Promise<JobRecord> {
    const row: Selectable<JobsTable> = {
      id: job.id,
      workspace_id: job.workspaceId,
      api_user_id: job.apiUserId,
      type: job.type,
      status: job.status,
      created_at: 0,
      updated_at: 0,
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
    // The API user's creation clock: one more than its newest job, or `now` if that is later. The
    // row lock (PostgreSQL) or write lock (SQLite) makes concurrent creations for one user take
    // distinct, increasing times.
    const advanced = sql<number>`CASE WHEN last_job_us + 1 > CAST(${now} AS BIGINT) THEN last_job_us + 1 ELSE CAST(${now} AS BIGINT) END`;
    if (this.#fusedWrites) {
      // One statement, one round trip: the clock advanced and the row inserted with its time.
      return this.#transact(async (db) => {
        const { created_at } = await db
          .with('u', (d) => d.updateTable('api_users').set({ last_job_us: advanced }).where('id', '=', job.apiUserId).returning('last_job_us'))
          .insertInto('jobs')
          .columns(['id', 'workspace_id', 'api_user_id', 'type', 'status', 'created_at', 'updated_at', 'request', 'webhook_url', 'zero_data_retention', 'created_by', 'request_id'])
          .expression((eb) =>
            eb
              .selectFrom('u')
              .select([
                eb.val(row.id).as('id'),
                eb.val(row.workspace_id).as('workspace_id'),
                eb.val(row.api_user_id).as('api_user_id'),
                eb.val(row.type).as('type'),
                eb.val(row.status).as('status'),
                'u.last_job_us as created_at',
                'u.last_job_us as updated_at',
                eb.val(row.request).as('request'),
                sql<string | null>`CAST(${row.webhook_url} AS TEXT)`.as('webhook_url'),
                sql<number>`CAST(${row.zero_data_retention} AS INTEGER)`.as('zero_data_retention'),
                sql<string | null>`CAST(${row.created_by} AS TEXT)`.as('created_by'),
                sql<string | null>`CAST(${row.request_id} AS TEXT)`.as('request_id'),
              ]),
          )
          .returning('created_at')
          .executeTakeFirstOrThrow();
        const createdAt = Number(created_at);
        return toJobRecord({ ...row, created_at: createdAt, updated_at: createdAt });
      });
    }
    return this.#transact(async (db) => {
      const { last_job_us } = await db
        .updateTable('api_users')
        .set({ last_job_us: advanced })
        .where('id', '=', job.apiUserId)
        .returning('last_job_us')
        .executeTakeFirstOrThrow();
      const createdAt = Number(last_job_us);
      const inserted = { ...row, created_at: createdAt, updated_at: createdAt };
      await db.insertInto('jobs').values(inserted).execute();
      return toJobRecord(inserted);
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

  async getJobSummary(apiUserId: string, id: string): Promise<JobSummary | undefined> {
    const r = await this.#db
      .selectFrom('jobs')
      .select(SUMMARY_COLUMNS)
      .where('api_user_id', '=', apiUserId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && toJobSummary(r);
  }

  async listJobs(q: JobQuery): Promise<JobSummary[]> {
    let query = this.#db.selectFrom('jobs').select(SUMMARY_COLUMNS).where('api_user_id', '=', q.apiUserId);
    // A range on jobs_user_created (api_user_id, created_at), read backwards from `before`.
    if (q.from !== undefined) query = query.where('created_at', '>=', q.from);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    if (q.types && q.types.length > 0) query = query.where('type', 'in', [...q.types]);
    if (q.status !== undefined) query = query.where('status', '=', q.status);
    const rows = await query.orderBy('created_at', 'desc').limit(q.limit).execute();
    return rows.map(toJobSummary);
  }

  async deleteJob(apiUserId: string, id: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('jobs')
      .where('api_user_id', '=', apiUserId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async transitions(apiUserId: string, id: string, afterId: number, limit: number): Promise<JobHistory<JobSummary> | undefined> {
    // One statement, so one snapshot on both backends: the job and its history agree (its last
    // transition is its status), however the job moves between two reads.
    const rows = await this.#db
      .selectFrom('jobs as j')
      .leftJoin('job_transitions as t', (join) => join.onRef('t.job_id', '=', 'j.id').on('t.id', '>', afterId))
      .select(['j.id', 'j.type', 'j.status', 'j.created_at', 'j.completed_at', 'j.result', 'j.error', 't.id as t_id', 't.status as t_status', 't.at as t_at'])
      .where('j.api_user_id', '=', apiUserId)
      .where('j.id', '=', id)
      .orderBy('t.id')
      .limit(limit)
      .execute();
    const first = rows[0];
    if (!first) return undefined;
    const transitions = rows.flatMap((r) => (r.t_id === null || r.t_status === null || r.t_at === null ? [] : [{ id: Number(r.t_id), status: r.t_status, at: Number(r.t_at) }]));
    return { job: toJobSummary(first), transitions };
  }

  async outputKeysInUse(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    // One round trip, an index seek per key on each side (jobs_output_key, styles_output_key, the
    // assets' unique output_key): the janitor asks this per batch.
    const rows = await this.#servedJobKeys(keys).unionAll(styleKeysKept(this.#db, keys)).unionAll(assetKeysKept(this.#db, keys)).execute();
    return new Set(rows.map((r) => r.output_key!));
  }

  async jobOutputKeysServed(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    // A style's cover is served at its job's URL, even once the job is deleted.
    const rows = await this.#servedJobKeys(keys).unionAll(styleKeysKept(this.#db, keys)).execute();
    return new Set(rows.map((r) => r.output_key!));
  }

  #servedJobKeys(keys: readonly string[]) {
    // A failed or cancelled job's files are removed with its end (POST /jobs/{id}/cancel keeps the
    // record); expired outputs (the retention janitor) are removed after they stop being served.
    return this.#db
      .selectFrom('jobs')
      .select('output_key')
      .where('output_key', 'in', [...keys])
      .where('status', 'not in', ['failed', 'cancelled'])
      .where('outputs_expired_at', 'is', null);
  }
}
