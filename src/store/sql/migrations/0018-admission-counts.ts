import { PostgresAdapter, sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0018_admission_counts: each workspace's admitted (queued or running) and backlogged jobs as
 * running numbers, so admission reads two integers instead of counting rows, and costs the same at
 * any queue depth (docs/benchmarks.md, issue 33).
 *
 * Triggers on `jobs` keep them, as 0015's keep the status history: the insert of a job, every
 * status change that enters or leaves one of the two sets and the deletion of a counted job move
 * the numbers in the same statement, so no move can forget them. Every such move already locks the
 * workspace row first (store/locked-workspace.ts), so the trigger's UPDATE of that row keeps the
 * lock order. The status sets are frozen here as ACTIVE_STATUSES was when this shipped
 * (domain/states.ts); a test recounts after every kind of move (test/store/admission-counts.test.ts).
 */
const ACTIVE = `('queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete')`;

export const ADMISSION_COUNTS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    await db.schema.alterTable('workspaces').addColumn('active_jobs', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('workspaces').addColumn('backlogged_jobs', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await sql
      .raw(
        `UPDATE workspaces SET
           active_jobs = (SELECT COUNT(*) FROM jobs WHERE jobs.workspace_id = workspaces.id AND jobs.status IN ${ACTIVE}),
           backlogged_jobs = (SELECT COUNT(*) FROM jobs WHERE jobs.workspace_id = workspaces.id AND jobs.status = 'backlogged')`,
      )
      .execute(db);
    // A job's weight in each number: 1 when its status is in the set, else 0.
    const active = (row: string) => `(CASE WHEN ${row}.status IN ${ACTIVE} THEN 1 ELSE 0 END)`;
    const backlogged = (row: string) => `(CASE WHEN ${row}.status = 'backlogged' THEN 1 ELSE 0 END)`;
    const changes = `${active('OLD')} <> ${active('NEW')} OR ${backlogged('OLD')} <> ${backlogged('NEW')}`;
    const counted = (row: string) => `${row}.status = 'backlogged' OR ${row}.status IN ${ACTIVE}`;
    if (postgres) {
      await sql
        .raw(
          `CREATE FUNCTION mediagen_admission_counts() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF TG_OP = 'INSERT' THEN
               UPDATE workspaces SET active_jobs = active_jobs + ${active('NEW')}, backlogged_jobs = backlogged_jobs + ${backlogged('NEW')}
                 WHERE id = NEW.workspace_id;
             ELSIF TG_OP = 'UPDATE' THEN
               UPDATE workspaces SET active_jobs = active_jobs + ${active('NEW')} - ${active('OLD')},
                 backlogged_jobs = backlogged_jobs + ${backlogged('NEW')} - ${backlogged('OLD')}
                 WHERE id = NEW.workspace_id;
             ELSE
               UPDATE workspaces SET active_jobs = active_jobs - ${active('OLD')}, backlogged_jobs = backlogged_jobs - ${backlogged('OLD')}
                 WHERE id = OLD.workspace_id;
             END IF;
             RETURN NULL;
           END
           $$`,
        )
        .execute(db);
      const run = 'FOR EACH ROW';
      await sql.raw(`CREATE TRIGGER admission_counts_insert AFTER INSERT ON jobs ${run} WHEN (${counted('NEW')}) EXECUTE FUNCTION mediagen_admission_counts()`).execute(db);
      await sql.raw(`CREATE TRIGGER admission_counts_update AFTER UPDATE OF status ON jobs ${run} WHEN (${changes}) EXECUTE FUNCTION mediagen_admission_counts()`).execute(db);
      await sql.raw(`CREATE TRIGGER admission_counts_delete AFTER DELETE ON jobs ${run} WHEN (${counted('OLD')}) EXECUTE FUNCTION mediagen_admission_counts()`).execute(db);
      return;
    }
    await sql
      .raw(
        `CREATE TRIGGER admission_counts_insert AFTER INSERT ON jobs WHEN ${counted('NEW')} BEGIN
           UPDATE workspaces SET active_jobs = active_jobs + ${active('NEW')}, backlogged_jobs = backlogged_jobs + ${backlogged('NEW')}
             WHERE id = NEW.workspace_id;
         END`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER admission_counts_update AFTER UPDATE OF status ON jobs WHEN ${changes} BEGIN
           UPDATE workspaces SET active_jobs = active_jobs + ${active('NEW')} - ${active('OLD')},
             backlogged_jobs = backlogged_jobs + ${backlogged('NEW')} - ${backlogged('OLD')}
             WHERE id = NEW.workspace_id;
         END`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER admission_counts_delete AFTER DELETE ON jobs WHEN ${counted('OLD')} BEGIN
           UPDATE workspaces SET active_jobs = active_jobs - ${active('OLD')}, backlogged_jobs = backlogged_jobs - ${backlogged('OLD')}
             WHERE id = OLD.workspace_id;
         END`,
      )
      .execute(db);
  },
};
