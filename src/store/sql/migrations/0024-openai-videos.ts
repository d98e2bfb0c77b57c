import type { Kysely, Migration } from 'kysely';

/**
 * 0024_openai_videos: what OpenAI's video object shows of a video created through POST /v1/videos
 * that the job itself does not keep: the model id the request named when it was not the path (an
 * alias of the config's `openai.models`). Kept with the job, not read from the config, so a video
 * reads back as it was created after its alias has left the config; deleted with its job.
 */
export const OPENAI_VIDEOS_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('openai_videos')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('model', 'text', (c) => c.notNull())
      .execute();
  },
};
