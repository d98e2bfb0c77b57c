import type { Kysely, Migration } from 'kysely';

/**
 * 0022_token_budgets: an API token may carry its own limits (issue 40: spend in a period, model
 * patterns, concurrent jobs), kept as one JSON value because they are set once, at creation, and
 * read whole with the token on every request. `token_jobs` names the jobs a limited token created:
 * its spend is then read from the ledger (hold minus release of those jobs, so it is held and
 * settled exactly like the balance) and its jobs in flight are those whose hold is still open.
 * The rows outlive the jobs, as the ledger does, so retention never gives spend back.
 */
export const TOKEN_BUDGETS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('api_tokens').addColumn('limits', 'text').execute();
    await db.schema
      .createTable('token_jobs')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('token_id', 'text', (c) => c.notNull().references('api_tokens.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('token_jobs_period').on('token_jobs').columns(['token_id', 'created_at']).execute();
  },
};
