import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/**
 * 0019_upstream_engine: `job_upstreams.provider` becomes `engine`, the one name the engine context,
 * the worker protocol and the job's details give it. Provider engines stored their `providers`
 * name there (`replicate`), other engines their id (`comfyui:gpu`): a value without a kind is a
 * provider's and becomes `provider:<name>`, so every row names its engine as a binding does and a
 * job running across the upgrade resumes its provider's job instead of submitting it again.
 * SQLite (3.25 and later) and PostgreSQL both rename a column in place; the rows are kept.
 */
export const UPSTREAM_ENGINE_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('job_upstreams').renameColumn('provider', 'engine').execute();
    await sql`UPDATE job_upstreams SET engine = 'provider:' || engine WHERE engine NOT LIKE '%:%'`.execute(db);
  },
};
