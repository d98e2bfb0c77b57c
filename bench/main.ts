/**
 * `npm run bench [-- --quick]`: every figure of issue 13 on SQLite and PostgreSQL, each beside a
 * baseline taken in the same run. Prints a table and writes bench/results/latest.json (one object
 * per backend) and bench/results/machine.json (the machine, the settings, notes). docs/benchmarks.md
 * says what each figure means.
 *
 *   BENCH_DATABASE_URL  PostgreSQL server to create the bench database on (default DEFAULT_PG_URL)
 *   BENCH_SECONDS       seconds per autocannon run (default 8, or 3 with --quick)
 *   BENCH_BACKENDS      e.g. `sqlite` to run one backend only
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PG_URL, createPostgresDatabase, createSqliteDatabase } from './lib/database.js';
import type { BackendName, BenchDatabase } from './lib/database.js';
import { machineInfo, resultTable } from './lib/report.js';
import { emptyResult } from './lib/results.js';
import type { BackendResult } from './lib/results.js';
import { settingsFrom } from './lib/settings.js';
import { runBackend } from './run-backend.js';

const started = performance.now();
const settings = settingsFrom(process.argv.slice(2), process.env);
const machine = machineInfo();
const say = (line: string) => console.log(line);
const wanted = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',').map((b) => b.trim());

say(`mediagen bench${settings.quick ? ' --quick' : ''}: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gb} GB, Node ${machine.node}`);
say(`store scale compares ${settings.smallStore.toLocaleString('en')} with ${settings.largeStore.toLocaleString('en')} stored jobs${settings.quick ? ' (1,000,000 without --quick)' : ''}\n`);

const results: Record<BackendName, BackendResult> = { sqlite: emptyResult(), postgres: emptyResult() };
const notes: Record<BackendName, string[]> = { sqlite: [], postgres: [] };

for (const backend of ['sqlite', 'postgres'] as const) {
  if (!wanted.includes(backend)) {
    notes[backend].push('skipped: not in BENCH_BACKENDS');
    continue;
  }
  const makeDb = async () => (backend === 'sqlite' ? createSqliteDatabase() : createPostgresDatabase(process.env.BENCH_DATABASE_URL ?? DEFAULT_PG_URL));
  let db: BenchDatabase;
  try {
    db = await makeDb();
  } catch (err) {
    const reason = `skipped: cannot create a database on ${process.env.BENCH_DATABASE_URL ?? DEFAULT_PG_URL}: ${(err as Error).message}`;
    say(`[${backend}] ${reason}\n`);
    notes[backend].push(reason);
    continue;
  }
  try {
    const run = await runBackend(db, makeDb, settings, say);
    results[backend] = run.result;
    notes[backend].push(...run.notes);
  } catch (err) {
    const reason = `failed: ${(err as Error).stack ?? (err as Error).message}`;
    say(`[${backend}] ${reason}`);
    notes[backend].push(reason);
  } finally {
    await db.drop().catch((err: unknown) => say(`[${backend}] could not drop the bench database: ${(err as Error).message}`));
  }
  say('');
}

const seconds = Math.round((performance.now() - started) / 1000);
say(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${new Date().toISOString().slice(0, 10)}, ${settings.quick ? '--quick' : 'full run'}, ${seconds} s\n`);
say(resultTable(results));

const dir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
writeFileSync(`${dir}latest.json`, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(
  `${dir}machine.json`,
  `${JSON.stringify({ machine, date: new Date().toISOString(), quick: settings.quick, duration_s: seconds, settings, notes }, null, 2)}\n`,
);
say(`\nwrote bench/results/latest.json and bench/results/machine.json`);
// pg pools, keep-alive sockets and timers of closed servers must not hold the process open.
process.exit(0);
