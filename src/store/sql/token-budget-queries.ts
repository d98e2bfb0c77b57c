import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { TokenBudgetStore, TokenJob, TokenUsage } from '../token-budget-store.js';

export class SqlTokenBudgetStore implements TokenBudgetStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async recordJobs(jobs: readonly TokenJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.#db
      .insertInto('token_jobs')
      .values(jobs.map((j) => ({ job_id: j.jobId, token_id: j.tokenId, created_at: j.createdAt })))
      .execute();
  }

  /**
   * One statement over the token's jobs of the period (index token_jobs_period) and their ledger
   * entries (the unique index on job and kind): a hold counts until it is released; a charge
   * leaves it counted, a release takes back what it gives back. Open jobs are counted over every
   * period, since a job admitted yesterday may still be running today.
   */
  async usage(tokenId: string, since: number): Promise<TokenUsage> {
    const spent = await this.#db
      .selectFrom('token_jobs as t')
      .innerJoin('ledger_entries as l', 'l.job_id', 't.job_id')
      .select(sql<string | number>`COALESCE(SUM(CASE WHEN l.kind = 'hold' THEN l.amount_micros WHEN l.kind = 'release' THEN -l.amount_micros ELSE 0 END), 0)`.as('spent'))
      .where('t.token_id', '=', tokenId)
      .where('t.created_at', '>=', since)
      .executeTakeFirstOrThrow();
    const open = await this.#db
      .selectFrom('token_jobs as t')
      .innerJoin('ledger_entries as h', (j) => j.onRef('h.job_id', '=', 't.job_id').on('h.kind', '=', 'hold'))
      .select((eb) => eb.fn.countAll<string | number>().as('open'))
      .where('t.token_id', '=', tokenId)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('ledger_entries as e').select('e.id').whereRef('e.job_id', '=', 't.job_id').where('e.kind', 'in', ['charge', 'release']))),
      )
      .executeTakeFirstOrThrow();
    return { spentMicros: Number(spent.spent), openJobs: Number(open.open) };
  }
}
