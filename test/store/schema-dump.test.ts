import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';
import { REGENERATE, dumpPostgresSchema, dumpSqliteSchema } from '../helpers/schema-dump.js';

/**
 * The schema every migration together makes, compared with the dump committed beside this file,
 * so a change to the schema (a new migration, an edited one) shows in review as a diff of those
 * files. UPDATE_SCHEMA_DUMP=1 rewrites them instead of comparing.
 */
const SCHEMA_DIR = fileURLToPath(new URL('./schema/', import.meta.url));

function compare(dump: string, fileName: string): void {
  const file = join(SCHEMA_DIR, fileName);
  if (process.env.UPDATE_SCHEMA_DUMP === '1') {
    writeFileSync(file, dump);
    return;
  }
  const committed = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const where = relative(process.cwd(), file);
  expect(dump, `the migrated schema is not ${where}; if the change is meant, rewrite it with ${REGENERATE} and commit the diff`).toBe(committed);
}

describe('the schema of a freshly migrated store', () => {
  it('SQLite: as test/store/schema/sqlite.sql.txt says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-schema-'));
    try {
      const file = join(dir, 'mediagen.db');
      await (await openSqliteStore(file)).close();
      compare(dumpSqliteSchema(file), 'sqlite.sql.txt');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('PostgreSQL: as test/store/schema/postgres.sql.txt says', async () => {
    // A new empty database migrated here, not the run's template: this is the migrations' own work.
    const database = await createPostgresDatabase();
    try {
      await (await openPostgresStore(database.url, { poolSize: 1 })).close();
      compare(await dumpPostgresSchema(database.url), 'postgres.sql.txt');
    } finally {
      await database.drop();
    }
  });
});
