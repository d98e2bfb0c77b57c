import type { Kysely, Selectable } from 'kysely';
import type { Database, JobsTable } from '../schema.js';
import type { JobHistory } from '../job-history.js';
import type { JobQuery, JobRecord, JobStore, JobSummary, NewJob } from '../job-store.js';
import { assetKeysKept } from './asset-queries.js';
import { styleKeysKept } from './style-queries.js';
import type { Transact } from './transact.js';
import { insertJobs } from './job-inserts.js';
import { parse, tagsOf, toJobRecord } from './job-rows.js';
import { PreparedQuery } from './prepared-query.js';

export { toJobRecord } from './job-rows.js';

/** The columns of a JobSummary: a list reads no request body (up to the body limit each) it would throw away. */
const SUMMARY_COLUMNS = ['id', 'type', 'status', 'created_at', 'completed_at', 'result', 'error', 'tags'] as const;

const TAGGED_COLUMNS = SUMMARY_COLUMNS.map((c) => `j.${c}` as const);

const toJobSummary = (r: Pick<Selectable<JobsTable>, (typeof SUMMARY_COLUMNS)[number]>): JobSummary => ({
  id: r.id,
  type: r.type,
  status: r.status,
  createdAt: Number(r.created_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  result: parse(r.result),
  error: parse(r.error),
  tags: tagsOf(r.tags),
});

type JobKey = { args: { apiUserId: string; id: string } };

/** `GET /jobs/{id}` and every route that reads one job: an API user sees only its own. */
const JOB_BY_ID = new PreparedQuery((db, { args }: JobKey) =>
  db.selectFrom('jobs').selectAll().where('api_user_id', '=', args.apiUserId).where('id', '=', args.id).compile(),
);

const JOB_SUMMARY_BY_ID = new PreparedQuery((db, { args }: JobKey) =>
  db.selectFrom('jobs').select(SUMMARY_COLUMNS).where('api_user_id', '=', args.apiUserId).where('id', '=', args.id).compile(),
);

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
    return this.#transact(async (db) => (await insertJobs(db, [job], now, this.#fusedWrites))[0]!);
  }

  insertJobs(jobs: readonly NewJob[], now: number): Promise<JobRecord[]> {
    return jobs.length === 0 ? Promise.resolve([]) : this.#transact((db) => insertJobs(db, jobs, now, this.#fusedWrites));
  }

  async getJob(apiUserId: string, id: string): Promise<JobRecord | undefined> {
    const r = (await JOB_BY_ID.execute(this.#db, { apiUserId, id }, undefined)).rows[0];
    return r && toJobRecord(r);
  }

  async getJobSummary(apiUserId: string, id: string): Promise<JobSummary | undefined> {
    const r = (await JOB_SUMMARY_BY_ID.execute(this.#db, { apiUserId, id }, undefined)).rows[0];
    return r && toJobSummary(r);
  }

  async listJobs(q: JobQuery): Promise<JobSummary[]> {
    if (q.tag !== undefined) return this.#listTagged(q, q.tag);
    let query = this.#db.selectFrom('jobs').select(SUMMARY_COLUMNS).where('api_user_id', '=', q.apiUserId);
    // A range on jobs_user_created (api_user_id, created_at), read backwards from `before` (forwards from `from` for asc).
    if (q.from !== undefined) query = query.where('created_at', '>=', q.from);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    if (q.types && q.types.length > 0) query = query.where('type', 'in', [...q.types]);
    if (q.status !== undefined) query = query.where('status', '=', q.status);
    const rows = await query.orderBy('created_at', q.order ?? 'desc').limit(q.limit).execute();
    return rows.map(toJobSummary);
  }

  /**
   * A range of job_tags_user_tag_created (api_user_id, tag, created_at), read backwards from
   * `before`, each row's job by its primary key: a page costs its own rows, however many jobs the
   * user has without the tag. A tag row's created_at is its job's.
   */
  async #listTagged(q: JobQuery, tag: string): Promise<JobSummary[]> {
    let query = this.#db
      .selectFrom('job_tags as g')
      .innerJoin('jobs as j', 'j.id', 'g.job_id')
      .select(TAGGED_COLUMNS)
      .where('g.api_user_id', '=', q.apiUserId)
      .where('g.tag', '=', tag);
    if (q.from !== undefined) query = query.where('g.created_at', '>=', q.from);
    if (q.before !== undefined) query = query.where('g.created_at', '<', q.before);
    if (q.types && q.types.length > 0) query = query.where('j.type', 'in', [...q.types]);
    if (q.status !== undefined) query = query.where('j.status', '=', q.status);
    const rows = await query.orderBy('g.created_at', q.order ?? 'desc').limit(q.limit).execute();
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
      .select(['j.id', 'j.type', 'j.status', 'j.created_at', 'j.completed_at', 'j.result', 'j.error', 'j.tags', 't.id as t_id', 't.status as t_status', 't.at as t_at'])
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
