import { PostgresAdapter, sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0015_job_transitions: every status a job has had, in order (its SSE stream and its resume point,
 * docs/states.md "Status history"), and the request that created each job (`X-Request-Id`).
 *
 * The rows are written by triggers on `jobs`, so no move can forget one: the insert of a job and
 * every UPDATE that changes its status add a row in the same statement, hence the same
 * transaction. On PostgreSQL the trigger also sends the cross-process `changed` event (NOTIFY is
 * transactional: delivered at the commit, never on rollback); on SQLite, which has no NOTIFY, the
 * store announces it after the commit (queue-queries.ts). The first migration whose SQL differs by
 * backend: trigger bodies have no common dialect, so it asks Kysely's adapter which one it runs on.
 *
 * The channel name and event shape are frozen here, as shipped migrations are never edited:
 * `mediagen_jobs` is JOB_EVENTS_CHANNEL (postgres/pg-notify.ts), the payload a JobEvent
 * (job-event-codec.ts).
 */
export const TRANSITIONS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    await db.schema.alterTable('jobs').addColumn('request_id', 'text').execute();
    await db.schema
      .createTable('job_transitions')
      // SQLite: the rowid, without AUTOINCREMENT (one B-tree write fewer per change). A job's rows go
      // only with the job, so each new row of a job is above all its others: the ids a job's stream
      // gives still increase, which is all Last-Event-ID needs.
      .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => c.primaryKey())
      // Deleted with its job (SQLite runs with foreign_keys = ON): a deleted job has no history.
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    // A stream reads one job's rows after an id; the cascade finds a deleted job's rows here too.
    await db.schema.createIndex('job_transitions_job').on('job_transitions').columns(['job_id', 'id']).execute();
    // Jobs stored before this migration start their history at their current status.
    await sql`INSERT INTO job_transitions (job_id, status, at) SELECT id, status, updated_at FROM jobs ORDER BY created_at, id`.execute(db);
    if (postgres) {
      await sql`
        CREATE FUNCTION mediagen_job_transition() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO job_transitions (job_id, status, at) VALUES (NEW.id, NEW.status, NEW.updated_at);
          IF TG_OP = 'UPDATE' THEN
            PERFORM pg_notify('mediagen_jobs', json_build_object('kind', 'changed', 'jobId', NEW.id)::text);
          END IF;
          RETURN NULL;
        END
        $$`.execute(db);
      await sql`CREATE TRIGGER job_transitions_insert AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION mediagen_job_transition()`.execute(db);
      await sql`
        CREATE TRIGGER job_transitions_update AFTER UPDATE OF status ON jobs FOR EACH ROW
        WHEN (NEW.status IS DISTINCT FROM OLD.status) EXECUTE FUNCTION mediagen_job_transition()`.execute(db);
      return;
    }
    await sql`
      CREATE TRIGGER job_transitions_insert AFTER INSERT ON jobs
      BEGIN INSERT INTO job_transitions (job_id, status, at) VALUES (NEW.id, NEW.status, NEW.updated_at); END`.execute(db);
    await sql`
      CREATE TRIGGER job_transitions_update AFTER UPDATE OF status ON jobs WHEN NEW.status IS NOT OLD.status
      BEGIN INSERT INTO job_transitions (job_id, status, at) VALUES (NEW.id, NEW.status, NEW.updated_at); END`.execute(db);
  },
};
