/**
 * HTTP throughput of the API against a bare Fastify baseline measured in the same run, on loopback.
 * Machines here are shared and noisy: read the ratios, not the absolute numbers.
 *
 *   npm run bench            (BENCH_SECONDS=N to change the duration of each run)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { createRuntime } from '../src/app/runtime.js';
import { loadConfig } from '../src/config/config.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function run(title: string, opts: autocannon.Options, expectStatus = 200): Promise<number> {
  const result = await autocannon({ connections: 10, duration: seconds, ...opts });
  const codes = result as unknown as Record<string, number>;
  const expected = codes[`${Math.floor(expectStatus / 100)}xx`] ?? 0;
  const non2xx = result.requests.total - expected + result.errors;
  console.log(`${title.padEnd(44)} ${result.requests.average.toFixed(0).padStart(7)} req/s  p99 ${String(result.latency.p99).padStart(4)} ms${non2xx ? `  (${non2xx} failed!)` : ''}`);
  return result.requests.average;
}

const baseline = Fastify();
baseline.get('/', async () => ({ ok: true }));
baseline.post('/', async (req) => ({ echo: (req.body as { prompt?: string }).prompt ?? null }));
const baseUrl = await listen(baseline);

const dir = mkdtempSync(join(tmpdir(), 'mediagen-bench-'));
// No worker runs here: jobs pile up as queued, so the limits are set high enough never to say 429.
const runtime = await createRuntime({ ...loadConfig({ env: {} }), dataDir: dir, maxConcurrentJobs: 100_000, maxBackloggedJobs: 1_000_000 });
const { store, services } = runtime;
const boot = (await services.identity.bootstrap())!;
// Enough API balance that the bench measures admission, never a 402.
await store.billing.topUp({ workspaceId: boot.workspace.id, amountMicros: 1e12, createdBy: 'bench', now: 0 });
let url = '';
const app = await runtime.buildHttp({ publicUrl: () => url });
url = await listen(app);
const auth = { authorization: `Bearer ${boot.secret}`, 'content-type': 'application/json' };
const body = JSON.stringify({ prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' });

const created = await app.inject({ method: 'POST', url: '/generate/image/vendor-a/model-a-2/medium', headers: auth, payload: body });
const jobId = created.json().job_id as string;

console.log(`each run: ${seconds}s, 10 connections, loopback\n`);
const getBase = await run('baseline: bare Fastify GET', { url: baseUrl });
const postBase = await run('baseline: bare Fastify POST JSON', { url: baseUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body });
const getJob = await run('GET /jobs/{id}', { url: `${url}/jobs/${jobId}`, headers: auth });
const list = await run('GET /jobs?limit=100', { url: `${url}/jobs?limit=100`, headers: auth });
const create = await run('POST /generate/.../model-a-2/medium', { url: `${url}/generate/image/vendor-a/model-a-2/medium`, method: 'POST', headers: auth, body });
const refused = await run('POST with an invalid body (400)', { url: `${url}/generate/image/vendor-a/model-a-2/medium`, method: 'POST', headers: auth, body: '{"prompt":5}' }, 400);

console.log('\nratios to the baseline of the same run:');
console.log(`  GET /jobs/{id}        ${(getJob / getBase).toFixed(2)} of bare GET`);
console.log(`  GET /jobs?limit=100   ${(list / getBase).toFixed(2)} of bare GET`);
console.log(`  POST (create a job)   ${(create / postBase).toFixed(2)} of bare POST`);
console.log(`  POST refused (400)    ${(refused / postBase).toFixed(2)} of bare POST`);

await app.close();
await baseline.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
