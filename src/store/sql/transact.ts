import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Runs `fn` in a write transaction. Each backend supplies its own: SQLite must take the write lock
 * up front (BEGIN IMMEDIATE) or a second process writing in between fails the upgrade at once.
 */
export type Transact = <T>(fn: (db: Kysely<Database>) => Promise<T>) => Promise<T>;
