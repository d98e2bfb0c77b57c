import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { encodeJobEvent } from '../job-event-codec.js';
import type { JobEvent } from '../store.js';
import { PreparedQuery } from '../sql/prepared-query.js';

/** The PostgreSQL channel that carries JobEvents between processes. */
export const JOB_EVENTS_CHANNEL = 'mediagen_jobs';

/**
 * Sends the event to the other processes' LISTEN connections. NOTIFY is transactional: inside a
 * transaction it is delivered at commit, and not at all on rollback.
 */
export async function pgNotify(db: Kysely<Database>, event: JobEvent, origin?: string): Promise<void> {
  await NOTIFY.execute(db, { payload: encodeJobEvent(event, origin) }, undefined);
}

/** In the write transaction of every create and every end: built once (prepared-query.ts). */
const NOTIFY = new PreparedQuery((db, { args }: { args: { payload: string } }) => sql`SELECT pg_notify(${JOB_EVENTS_CHANNEL}, ${args.payload})`.compile(db));
