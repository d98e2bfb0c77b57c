/**
 * What the metrics cost a request (not part of `npm run bench`):
 *
 *   npx tsx bench/metrics.bench.ts
 *
 * Two apps on SQLite in this process, one without metrics and one with `metrics_token` (every
 * request then counted by route, method and status, its duration observed). `GET /jobs/{id}` and
 * `GET /models` through inject() (no sockets: the hook's cost is not hidden behind network time),
 * in interleaved blocks so drift on a shared machine falls on both alike; the median of the
 * blocks' ratios. Then the counting alone: `requestServed` per call.
 */
import { openRuntime } from '../src/cli/context.js';
import type { Runtime } from '../src/app/runtime.js';
import { PromMetrics } from '../src/metrics/prom-metrics.js';
import { systemClock } from '../src/lib/clock.js';
import { createSqliteDatabase } from './lib/database.js';
import { CREATE_BODY, CREATE_PATH } from './lib/settings.js';
import { serveFlags } from './lib/wiring.js';

const BLOCKS = 9;
const PER_BLOCK = 400;

async function app(metrics: boolean) {
  const db = createSqliteDatabase();
  const runtime: Runtime = await openRuntime({ ...serveFlags({ dataDir: db.dataDir }), ...(metrics ? { 'metrics-token': 'bench-metrics-token' } : {}) });
  const http = await runtime.buildHttp({ publicUrl: () => 'http://127.0.0.1' });
  const boot = (await runtime.services.identity.bootstrap(1e12))!;
  const headers = { authorization: `Bearer ${boot.secret}` };
  const created = await http.inject({ method: 'POST', url: CREATE_PATH, headers: { ...headers, 'content-type': 'application/json' }, payload: CREATE_BODY });
  const jobId = (created.json() as { job_id: string }).job_id;
  return {
    /** Microseconds per request of `url`, over PER_BLOCK requests. */
    async block(url: string): Promise<number> {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < PER_BLOCK; i++) {
        const res = await http.inject({ method: 'GET', url: url.replace(':id', jobId), headers });
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
      }
      return Number(process.hrtime.bigint() - t0) / PER_BLOCK / 1000;
    },
    async close() {
      await http.close();
      await runtime.close();
      await db.drop();
    },
  };
}

const off = await app(false);
const on = await app(true);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const url of ['/jobs/:id', '/models']) {
  await off.block(url);
  await on.block(url);
  const offUs: number[] = [];
  const onUs: number[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    offUs.push(await off.block(url));
    onUs.push(await on.block(url));
  }
  const ratios = offUs.map((u, i) => u / onUs[i]!);
  console.log(`GET ${url.padEnd(10)} without metrics ${median(offUs).toFixed(0).padStart(5)} µs, with ${median(onUs).toFixed(0).padStart(5)} µs; throughput with/without (median of ${BLOCKS} blocks) ${median(ratios).toFixed(3)}`);
}
await off.close();
await on.close();

const meter = new PromMetrics({ queueDepth: async () => new Map(), remoteWorkers: async () => 0, queueByModel: async () => [] }, systemClock);
const CALLS = 200_000;
const t0 = process.hrtime.bigint();
for (let i = 0; i < CALLS; i++) meter.requestServed('/jobs/:id', 'GET', 200, 0.002);
console.log(`requestServed alone: ${(Number(process.hrtime.bigint() - t0) / CALLS).toFixed(0)} ns per request`);
process.exit(0);
