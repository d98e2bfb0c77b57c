/**
 * `npx tsx bench/profile.ts [--backend sqlite|postgres] [--n 3000] [--connections 10] [--write]`:
 * where a create and a `GET /jobs/{id}` spend their CPU. The server is wired as `npm run bench`
 * wires it (bench/lib/wiring.ts: the worker running the zero-latency engine with 8 slots; SQLite in
 * a temporary data dir, or a `mediagen_bench_<random>` database on BENCH_DATABASE_URL, dropped at
 * the end). After an unprofiled warm-up, N creates and then N GETs of the created jobs go over
 * loopback with autocannon in this process, each phase under the inspector's CPU profiler; the
 * worker finishes the creates' jobs between the phases, unprofiled. Prints a flame summary per
 * phase; `--write` also writes the raw profiles to bench/results/profile-<backend>-<phase>.cpuprofile
 * (Chrome DevTools or speedscope open them).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatSummary, profiled, summarize } from './lib/cpu-profile.js';
import { DEFAULT_PG_URL, UNFINISHED, countJobs, createPostgresDatabase, createSqliteDatabase } from './lib/database.js';
import { FastEngine } from './lib/fast-engine.js';
import { runLoad } from './lib/load.js';
import type { LoadOptions, LoadResult } from './lib/load.js';
import { machineInfo } from './lib/report.js';
import { CREATE_BODY, CREATE_PATH } from './lib/settings.js';
import { waitUntil } from './lib/stats.js';
import { startServer } from './lib/wiring.js';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'sqlite' },
    n: { type: 'string', default: '3000' },
    connections: { type: 'string', default: '10' },
    write: { type: 'boolean', default: false },
  },
});
const backend = args.backend;
if (backend !== 'sqlite' && backend !== 'postgres') throw new Error(`--backend must be sqlite or postgres, not ${backend}`);
const n = Number(args.n);
const connections = Number(args.connections);
const root = fileURLToPath(new URL('../', import.meta.url));
const results = fileURLToPath(new URL('./results/', import.meta.url));
const machine = machineInfo();

console.log(`mediagen profile, ${backend}: ${n} creates and ${n} GET /jobs/{id}, ${connections} connections; ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);
const db = backend === 'sqlite' ? createSqliteDatabase() : await createPostgresDatabase(process.env.BENCH_DATABASE_URL ?? DEFAULT_PG_URL);
const server = await startServer({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, engine: new FastEngine(), workerConcurrency: 8 });
try {
  const auth = { authorization: `Bearer ${server.token}` };
  const create: LoadOptions = {
    url: `${server.url}${CREATE_PATH}`,
    connections,
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: CREATE_BODY,
    expectStatus: 201,
  };
  const drained = () => waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the worker to finish the jobs', 600_000, 20);
  const gets = async (amount: number): Promise<LoadOptions> => {
    const ids = await db.query<{ id: string }>('SELECT id FROM jobs ORDER BY created_at DESC LIMIT ?', [amount]);
    return { url: server.url, connections, headers: auth, paths: ids.map((r) => `/jobs/${r.id}`) };
  };
  const line = (phase: string, r: LoadResult, ms: number) =>
    `${phase}: ${r.total} requests in ${(ms / 1000).toFixed(1)} s, ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms${r.failed ? `, ${r.failed} failed!` : ''}`;

  // JIT, caches and pools, as the bench's warm-up.
  const warm = Math.min(n, 500);
  await runLoad({ ...create, amount: warm });
  await drained();
  await runLoad({ ...(await gets(warm)), amount: warm });

  const phases: [string, () => Promise<LoadOptions>][] = [
    ['create', async () => create],
    ['get', () => gets(n)],
  ];
  const summaries: string[] = [];
  for (const [phase, options] of phases) {
    const o = { ...(await options()), amount: n };
    const t0 = performance.now();
    const { result, profile } = await profiled(() => runLoad(o));
    const ms = performance.now() - t0;
    console.log(line(phase, result, ms));
    if (phase === 'create') await drained();
    summaries.push(formatSummary(`${backend} ${phase === 'create' ? `POST ${CREATE_PATH}` : 'GET /jobs/{id}'}`, summarize(profile, root)));
    if (args.write) {
      mkdirSync(results, { recursive: true });
      writeFileSync(`${results}profile-${backend}-${phase}.cpuprofile`, JSON.stringify(profile));
      console.log(`  wrote bench/results/profile-${backend}-${phase}.cpuprofile`);
    }
  }
  console.log(`\n${summaries.join('\n\n')}`);
} finally {
  await server.close();
  await db.drop();
}
// pg pools and keep-alive sockets must not hold the process open.
process.exit(0);
