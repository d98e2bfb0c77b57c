import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { storeExists } from '../../src/store/open-store.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

/** `storeExists` on PostgreSQL: a store is our migrations, not any Kysely app's migrations table. */
describe.runIf(TEST_DATABASE_URL)('storeExists on PostgreSQL', () => {
  it("is false without a migrations table, or with another Kysely app's; true with ours", async () => {
    const db = await createPostgresDatabase();
    const migrated = await createPostgresDatabase({ migrated: true });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const exists = () => storeExists({ databaseUrl: db.url, dataDir: '/nonexistent' });
      expect(await exists()).toBe(false);
      await client.query('CREATE TABLE kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255) NOT NULL)');
      await client.query(`INSERT INTO kysely_migration VALUES ('2024_01_create_users', '2024-01-01T00:00:00.000Z')`);
      expect(await exists()).toBe(false);
      expect(await storeExists({ databaseUrl: migrated.url, dataDir: '/nonexistent' })).toBe(true);
    } finally {
      await client.end();
      await db.drop();
      await migrated.drop();
    }
  });
});
