/**
 * What the status-history triggers (migration 0015) cost the store's hot writes (not part of
 * `npm run bench`):
 *
 *   npx tsx bench/transitions.bench.ts          # BENCH_DATABASE_URL for PostgreSQL, as npm run bench
 *
 * On each backend, in one process and one database, blocks of job inserts, claims and moves run
 * alternately with the triggers in place and dropped, so machine load falls on both sides alike;
 * the medians of the blocks are compared. The store calls are those of the create path (the insert
 * of a job) and of the worker (a claim, then start, markSampling and complete, each its own
 * statement as the worker makes them).
 */
import { join } from 'node:path';
import { newId } from '../src/lib/ids.js';
import { SQLITE_FILE } from '../src/store/open-store.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { DEFAULT_PG_URL, createPostgresDatabase, createSqliteDatabase } from './lib/database.js';
import type { BenchDatabase } from './lib/database.js';

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8);
const PER_BLOCK = 300;

/** Drops the triggers of migration 0015 and puts them back, as their definitions say. */
async function triggersOf(db: BenchDatabase): Promise<{ drop(): Promise<void>; restore(): Promise<void> }> {
  const defs =
    db.backend === 'sqlite'
      ? (await db.query<{ name: string; def: string }>("SELECT name, sql AS def FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'jobs'")).map((d) => ({
          ...d,
          dropSql: `DROP TRIGGER ${d.name}`,
        }))
      : (
          await db.query<{ name: string; def: string }>(
            "SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = 'jobs'::regclass AND tgname LIKE 'job_transitions_%'",
          )
        ).map((d) => ({ ...d, dropSql: `DROP TRIGGER ${d.name} ON jobs` }));
  if (defs.length !== 2) throw new Error(`expected the two triggers of migration 0015, found ${defs.length}`);
  return {
    drop: async () => {
      for (const d of defs) await db.query(d.dropSql);
    },
    restore: async () => {
      for (const d of defs) await db.query(d.def);
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Per-call µs of inserts, and of a worker's claim plus its three moves, over one block. */
async function block(store: Store, ws: { id: string; apiUserId: string }): Promise<{ insert: number; claim: number; run: number }> {
  const now = () => Date.now() * 1000;
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < PER_BLOCK; i++) {
    await store.jobs.insertJob(
      { id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type: 'bench', status: 'queued', request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'bench' },
      now(),
    );
  }
  const insert = Number(process.hrtime.bigint() - t0) / PER_BLOCK / 1000;
  let claimNs = 0n;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < PER_BLOCK; i++) {
    const c0 = process.hrtime.bigint();
    const c = (await store.queue.claim({ leaseId: newId(), leaseExpiresAt: now() + 30e6, outputKey: newId(), now: now() }))!;
    claimNs += process.hrtime.bigint() - c0;
    await store.queue.move('start', { id: c.id, leaseId: c.leaseId!, now: now() });
    await store.queue.move('markSampling', { id: c.id, leaseId: c.leaseId!, now: now() });
    await store.queue.move('complete', { id: c.id, leaseId: c.leaseId!, patch: { result: { urls: [] } }, now: now() });
  }
  const run = Number(process.hrtime.bigint() - t0) / PER_BLOCK / 1000;
  return { insert, claim: Number(claimNs) / PER_BLOCK / 1000, run };
}

async function measure(name: string, store: Store, triggers: Awaited<ReturnType<typeof triggersOf>>): Promise<void> {
  const apiUserId = newId();
  const ws = (await store.identity.createWorkspace({ id: newId(), name: 'bench', ownerEmail: 'b@x', apiUserId, maxConcurrentJobs: 4, maxBackloggedJobs: 4, now: Date.now() * 1000 }))!;
  const on: Awaited<ReturnType<typeof block>>[] = [];
  const off: Awaited<ReturnType<typeof block>>[] = [];
  await block(store, { id: ws.id, apiUserId }); // warm-up
  for (let i = 0; i < BLOCKS; i++) {
    on.push(await block(store, { id: ws.id, apiUserId }));
    await triggers.drop();
    off.push(await block(store, { id: ws.id, apiUserId }));
    await triggers.restore();
  }
  const row = (what: 'insert' | 'claim' | 'run') => {
    const a = median(on.map((r) => r[what]));
    const b = median(off.map((r) => r[what]));
    return `  ${what.padEnd(28)}${b.toFixed(0).padStart(10)}${a.toFixed(0).padStart(10)}${(a / b).toFixed(2).padStart(8)}`;
  };
  console.log(`\n${name}: median µs per call over ${BLOCKS} blocks of ${PER_BLOCK}`);
  console.log(`  ${''.padEnd(28)}${'without'.padStart(10)}${'with'.padStart(10)}${'ratio'.padStart(8)}`);
  console.log(row('insert'));
  console.log(row('claim'));
  console.log(row('run'));
}

const sqliteDb = createSqliteDatabase();
const sqliteStore = await openSqliteStore(join(sqliteDb.dataDir, SQLITE_FILE));
await measure('SQLite', sqliteStore, await triggersOf(sqliteDb));
await sqliteStore.close();
await sqliteDb.drop();

let pgDb: BenchDatabase | undefined;
try {
  pgDb = await createPostgresDatabase(process.env.BENCH_DATABASE_URL ?? DEFAULT_PG_URL);
} catch (err) {
  console.log(`\nPostgreSQL skipped: ${(err as Error).message}`);
}
if (pgDb) {
  const pgStore = await openPostgresStore(pgDb.databaseUrl!);
  try {
    await measure('PostgreSQL', pgStore, await triggersOf(pgDb));
  } finally {
    await pgStore.close();
    await pgDb.drop();
  }
}
process.exit(0);
