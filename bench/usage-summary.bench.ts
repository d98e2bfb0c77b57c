/**
 * GET /usage/summary against 200,000 ledger charges, on SQLite and PostgreSQL (not part of `npm run bench`):
 *
 *   npx tsx bench/usage-summary.bench.ts      # BENCH_DATABASE_URL, BENCH_BACKENDS as npm run bench
 *
 * One workspace with 200,000 charges spread over 30 days and 12 models (written with one SQL
 * statement, then the tables analysed), the summary asked through inject() (no sockets) over the
 * whole window, 20 times per grouping, median and slowest in ms. Beside it, once: reading the same
 * window as the console did before, every page of GET /usage at 1,000 per page.
 */
import { DEFAULT_PG_URL, createPostgresDatabase, createSqliteDatabase } from './lib/database.js';
import type { BenchDatabase } from './lib/database.js';
import { startServer } from './lib/wiring.js';

const ROWS = 200_000;
const MODELS = 12;
const RUNS = 20;
const DAY_US = 86_400_000_000;
const END_US = Date.parse('2026-11-01T00:00:00Z') * 1000;
const START_US = END_US - 30 * DAY_US;
const WINDOW = `start=${new Date(START_US / 1000).toISOString()}&end=${new Date(END_US / 1000).toISOString()}`;
const GROUPINGS = ['', 'day', 'model', 'day,model'];
const wanted = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',').map((b) => b.trim());

/** 200,000 charges of the workspace, evenly spaced over the window, one statement. */
async function seedCharges(db: BenchDatabase, workspaceId: string): Promise<number> {
  const pg = db.backend === 'postgres';
  const step = Math.floor((END_US - START_US) / ROWS);
  const id = pg ? `'00000000-0000-4000-9000-' || lpad(n.i::text, 12, '0')` : `printf('00000000-0000-4000-9000-%012d', n.i)`;
  const jobId = pg ? `'00000000-0000-4000-a000-' || lpad(n.i::text, 12, '0')` : `printf('00000000-0000-4000-a000-%012d', n.i)`;
  const model = pg ? `'image/vendor-bench/model-' || (n.i % ${MODELS})::text` : `'image/vendor-bench/model-' || (n.i % ${MODELS})`;
  const select = `SELECT ${id}, ?, 'charge', 1000 + (n.i % 997) * 37, ${jobId}, ${model}, ${START_US} + ${pg ? 'n.i::bigint' : 'n.i'} * ${step}`;
  const insert = 'INSERT INTO ledger_entries (id, workspace_id, kind, amount_micros, job_id, job_type, at)';
  const t0 = performance.now();
  if (pg) {
    await db.query(`${insert} ${select} FROM generate_series(0, ${ROWS - 1}) AS n(i)`, [workspaceId]);
    await db.query('ANALYZE ledger_entries');
    await db.query('CHECKPOINT').catch(() => undefined);
  } else {
    await db.query(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1}) ${insert} ${select} FROM n`, [workspaceId]);
    await db.query('ANALYZE');
    await db.query('PRAGMA wal_checkpoint(TRUNCATE)');
  }
  return performance.now() - t0;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

for (const backend of ['sqlite', 'postgres'] as const) {
  if (!wanted.includes(backend)) continue;
  const db = backend === 'sqlite' ? createSqliteDatabase() : await createPostgresDatabase(process.env.BENCH_DATABASE_URL ?? DEFAULT_PG_URL);
  const server = await startServer({ dataDir: db.dataDir, databaseUrl: db.databaseUrl });
  try {
    await server.stopRunner();
    const seeded = await seedCharges(db, server.workspaceId);
    console.log(`\n[${backend}] seeded ${ROWS.toLocaleString('en')} charges in ${(seeded / 1000).toFixed(1)} s`);
    const headers = { authorization: `Bearer ${server.token}` };
    const get = async (url: string) => {
      const res = await server.app.inject({ method: 'GET', url, headers });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json() as { total?: { jobs: number }; groups?: unknown[]; items?: unknown[]; next_cursor?: string | null };
    };
    for (const g of GROUPINGS) {
      const url = `/usage/summary?${WINDOW}${g ? `&group_by=${g}` : ''}`;
      const first = await get(url);
      if (first.total?.jobs !== ROWS) throw new Error(`${url} counted ${first.total?.jobs} jobs, not ${ROWS}`);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = process.hrtime.bigint();
        await get(url);
        times.push(ms(t0));
      }
      times.sort((a, b) => a - b);
      const median = (times[RUNS / 2 - 1]! + times[RUNS / 2]!) / 2;
      console.log(`  summary ${(g || 'total').padEnd(10)} ${String(first.groups!.length).padStart(4)} groups   median ${median.toFixed(1).padStart(7)} ms   max ${times.at(-1)!.toFixed(1).padStart(7)} ms`);
    }
    const t0 = process.hrtime.bigint();
    let pages = 0;
    let cursor: string | null | undefined;
    do {
      const page = await get(`/usage?${WINDOW}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    console.log(`  every page of GET /usage (${pages} pages of 1,000), once: ${ms(t0).toFixed(0)} ms`);
  } finally {
    await server.close();
    await db.drop();
  }
}
process.exit(0);
