import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { OpenAiVideoStore } from '../openai-video-store.js';

export class SqlOpenAiVideoStore implements OpenAiVideoStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async recordModel(jobId: string, model: string): Promise<void> {
    await this.#db
      .insertInto('openai_videos')
      .values({ job_id: jobId, model })
      .onConflict((oc) => oc.column('job_id').doNothing())
      .execute();
  }

  async modelsOf(jobIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    if (jobIds.length === 0) return new Map();
    const rows = await this.#db.selectFrom('openai_videos').select(['job_id', 'model']).where('job_id', 'in', jobIds).execute();
    return new Map(rows.map((r) => [r.job_id, r.model]));
  }
}
