import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { nameStatements } from '../../src/store/postgres/prepared-statements.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL named prepared statements', () => {
  let pool: pg.Pool | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await pool?.end();
    await drop?.();
  });

  it('prepares a statement with parameters once per connection and reuses it; transaction control and parameterless statements stay unnamed', async () => {
    const db = await createPostgresDatabase();
    drop = db.drop;
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    nameStatements(pool);
    const client = await pool.connect();
    try {
      // As Kysely's driver calls it: a text and its values, answered by a promise.
      await client.query('BEGIN', []);
      for (let i = 0; i < 3; i++) expect((await client.query('SELECT $1::int + 1 AS n', [i])).rows).toEqual([{ n: i + 1 }]);
      expect((await client.query('SELECT $1::text AS t', ['x'])).rows).toEqual([{ t: 'x' }]);
      await client.query('COMMIT', []);
      const { rows } = await client.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name');
      expect(rows).toEqual([
        { name: 'mg0', statement: 'SELECT $1::int + 1 AS n' },
        { name: 'mg1', statement: 'SELECT $1::text AS t' },
      ]);
    } finally {
      client.release();
    }
  });
});
