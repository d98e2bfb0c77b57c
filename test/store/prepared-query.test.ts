import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreparedQuery } from '../../src/store/sql/prepared-query.js';
import type { Database } from '../../src/store/schema.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';

/** A scratch table `t (id, v)` on each dialect; the statements under test use Kysely untyped for it. */
interface Dialect {
  readonly name: string;
  open(): Promise<{ db: Kysely<Database>; close(): Promise<void> }>;
}

const dialects: Dialect[] = [
  {
    name: 'sqlite',
    open: async () => {
      const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
      return { db, close: () => db.destroy() };
    },
  },
  ...(TEST_DATABASE_URL
    ? [
        {
          name: 'postgres',
          open: async () => {
            const made = await createPostgresDatabase();
            const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: made.url, max: 2 }) }) });
            return { db, close: async () => (await db.destroy(), await made.drop()) };
          },
        },
      ]
    : []),
];

type Row = { id: string; v: number };
// The scratch table is not in the Database type: the builds go through an untyped view of the same instance.
const untyped = (db: Kysely<Database>) => db as unknown as Kysely<{ t: Row }>;

for (const dialect of dialects) {
  describe(`PreparedQuery on ${dialect.name}`, () => {
    let opened: Awaited<ReturnType<Dialect['open']>>;
    beforeAll(async () => {
      opened = await dialect.open();
      await sql`CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER NOT NULL)`.execute(opened.db);
      await untyped(opened.db).insertInto('t').values([{ id: 'a', v: 1 }, { id: 'b', v: 2 }, { id: 'c', v: 3 }]).execute();
    });
    afterAll(() => opened.close());

    it('builds a statement once and binds each call its own values', async () => {
      let builds = 0;
      const byId = new PreparedQuery((db, { args }: { args: { id: string } }) => {
        builds++;
        return untyped(db).selectFrom('t').select(['id', 'v']).where('id', '=', args.id).compile();
      });
      const read = async (id: string) => (await byId.execute(opened.db, { id }, undefined)).rows;
      expect(await read('a')).toEqual([{ id: 'a', v: 1 }]);
      expect(await read('c')).toEqual([{ id: 'c', v: 3 }]);
      expect(await read('zz')).toEqual([]);
      expect(builds).toBe(1);
      // A transaction's Kysely shares its store's dialect, so it shares the compiled statement.
      await opened.db.transaction().execute(async (trx) => expect(await byId.execute(trx, { id: 'b' }, undefined)).toMatchObject({ rows: [{ id: 'b' }] }));
      expect(builds).toBe(1);
    });

    it('keeps one variant per shape key, and constants of the build apart from arguments', async () => {
      const built: string[] = [];
      const above = new PreparedQuery(
        (db, { args }: { args: { min: number } }, order: 'asc' | 'desc') => {
          built.push(order);
          return untyped(db).selectFrom('t').select('id').where('v', '>=', args.min).where('id', '!=', 'b').orderBy('v', order).compile();
        },
        String,
      );
      const ids = async (min: number, order: 'asc' | 'desc') => (await above.execute(opened.db, { min }, order)).rows.map((r) => r.id);
      expect(await ids(1, 'asc')).toEqual(['a', 'c']);
      expect(await ids(1, 'desc')).toEqual(['c', 'a']);
      expect(await ids(3, 'asc')).toEqual(['c']);
      expect(built).toEqual(['asc', 'desc']);
    });

    it("binds a batch statement's rows in order, one variant per count", async () => {
      let builds = 0;
      const insert = new PreparedQuery(
        (db, { row }: { row: (i: number) => Row }, count: number) => {
          builds++;
          return untyped(db)
            .insertInto('t')
            .values(Array.from({ length: count }, (_, i) => ({ id: row(i).id, v: row(i).v })))
            .compile();
        },
        String,
      );
      await insert.execute(opened.db, {}, 2, [{ id: 'd', v: 4 }, { id: 'e', v: 5 }]);
      await insert.execute(opened.db, {}, 2, [{ id: 'f', v: 6 }, { id: 'g', v: 7 }]);
      await insert.execute(opened.db, {}, 1, [{ id: 'h', v: 8 }]);
      const rows = await untyped(opened.db).selectFrom('t').select(['id', 'v']).where('v', '>=', 4).orderBy('v').execute();
      expect(rows).toEqual([{ id: 'd', v: 4 }, { id: 'e', v: 5 }, { id: 'f', v: 6 }, { id: 'g', v: 7 }, { id: 'h', v: 8 }].map((r) => ({ ...r })));
      expect(builds).toBe(2);
    });

    it('refuses an argument that the build altered, enumerated, wrote into the text or that the call left out', async () => {
      const altered = new PreparedQuery((db, { args }: { args: { id: string } }) => untyped(db).selectFrom('t').select('id').where('id', 'like', `${args.id}%`).compile());
      await expect(altered.execute(opened.db, { id: 'a' }, undefined)).rejects.toThrow(/altered a parameter stand-in/);
      const spread = new PreparedQuery((db, { args }: { args: Row }) => untyped(db).insertInto('t').values({ ...args }).compile());
      await expect(spread.execute(opened.db, { id: 'x', v: 9 }, undefined)).rejects.toThrow(/enumerated its stand-ins/);
      const byId = new PreparedQuery((db, { args }: { args: { id?: string } }) => untyped(db).selectFrom('t').select('id').where('id', '=', args.id!).compile());
      await expect(byId.execute(opened.db, {}, undefined)).rejects.toThrow(/parameter 1 has no value/);
      const literal = new PreparedQuery((db, { args }: { args: { id: string } }) => untyped(db).selectFrom('t').select('id').where('id', '=', sql.lit(args.id)).compile());
      await expect(literal.execute(opened.db, { id: 'a' }, undefined)).rejects.toThrow(/into its SQL text/);
    });
  });
}
