import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { UpstreamRecord, UpstreamStore } from '../upstream-store.js';

export class SqlUpstreamStore implements UpstreamStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async save(record: UpstreamRecord, leaseId: string): Promise<boolean> {
    const values = {
      job_id: record.jobId,
      engine: record.engine,
      upstream_id: record.id,
      state: JSON.stringify(record.state),
      updated_at: record.updatedAt,
    };
    // One statement: the row is written only while the lease is the caller's, so a reclaimed
    // job's new run can never be overwritten by the old one's late answer.
    const result = await this.#db
      .insertInto('job_upstreams')
      .columns(['job_id', 'engine', 'upstream_id', 'state', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('jobs')
          .select([eb.val(values.job_id).as('job_id'), eb.val(values.engine).as('engine'), eb.val(values.upstream_id).as('upstream_id'), eb.val(values.state).as('state'), eb.val(values.updated_at).as('updated_at')])
          .where('id', '=', record.jobId)
          .where('lease_id', '=', leaseId),
      )
      .onConflict((oc) =>
        oc.column('job_id').doUpdateSet((eb) => ({
          engine: eb.ref('excluded.engine'),
          upstream_id: eb.ref('excluded.upstream_id'),
          state: eb.ref('excluded.state'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async find(jobId: string): Promise<UpstreamRecord | undefined> {
    const row = await this.#db.selectFrom('job_upstreams').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    if (!row) return undefined;
    return {
      jobId: row.job_id,
      engine: row.engine,
      id: row.upstream_id,
      state: JSON.parse(row.state) as Record<string, unknown>,
      updatedAt: Number(row.updated_at),
    };
  }
}
