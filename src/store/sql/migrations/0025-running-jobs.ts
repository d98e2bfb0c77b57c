import { PostgresAdapter, sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0025_running_jobs: an index of the running jobs by workspace, which the fair claim counts for
 * every workspace it weighs (store/sql/claim-statement.ts). Along jobs_workspace_status that count
 * was four index ranges, one per running status, and PostgreSQL chose instead to read the whole
 * workspace's range and filter it: a third of a millisecond on every claim once a workspace had a
 * thousand jobs, on the path from a job's creation to its run (docs/benchmarks.md, "Issue 40").
 * This index holds only the jobs running now, so the count reads exactly them. PostgreSQL only:
 * SQLite already counts them by four seeks of jobs_workspace_status, and would only pay for the
 * index on every status change.
 *
 * The statuses are frozen here, as a shipped migration must be: they are RUNNING_STATUSES of
 * domain/states.ts, which test/store/job-indexes.test.ts holds to this predicate.
 */
export const RUNNING_JOBS_PREDICATE = ['scheduled', 'processing', 'sampling', 'intermediate-complete'] as const;

export const RUNNING_JOBS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await db.schema
      .createIndex('jobs_workspace_running')
      .on('jobs')
      .column('workspace_id')
      .where(sql<boolean>`status IN (${sql.join(RUNNING_JOBS_PREDICATE.map((s) => sql.lit(s)))})`)
      .execute();
  },
};
