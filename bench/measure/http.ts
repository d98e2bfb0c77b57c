import { startBaseline } from '../lib/baseline.js';
import { UNFINISHED, countJobs } from '../lib/database.js';
import type { BenchDatabase } from '../lib/database.js';
import { runLoad } from '../lib/load.js';
import type { LoadResult } from '../lib/load.js';
import { CREATE_BODY, CREATE_PATH } from '../lib/settings.js';
import { ratio, waitUntil } from '../lib/stats.js';
import type { BenchServer } from '../lib/wiring.js';

/**
 * One round of HTTP runs: the two baselines, then the three API routes and the create again spread
 * over several workspaces, in the same minute or two.
 */
export interface HttpRound {
  readonly baseGet: LoadResult;
  readonly basePost: LoadResult;
  readonly getJob: LoadResult;
  readonly listJobs: LoadResult;
  readonly createJob: LoadResult;
  /** The same creates, each request with the next of `tokens` (one per workspace). */
  readonly createJobSpread: LoadResult;
  /** Jobs not yet finished right after the (first) create run (the workers' backlog). */
  readonly unfinishedAfterCreate: number;
  /** Seconds the workers then took to finish them. */
  readonly drainSeconds: number;
}

export interface RouteFigure {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Requests per second as a fraction of the bare Fastify route of the same round. */
  readonly ratio: number | null;
}

/**
 * Drives the bare server and the API (workers running) with autocannon. `jobJson` is the body of
 * `GET /jobs/{jobId}`, which the bare GET answers verbatim; the bare POST parses the create body.
 * `tokens` are API tokens of other workspaces, one each, for the spread create run; the workers
 * finish the jobs of each create run before the next run starts.
 */
export async function httpRound(
  server: BenchServer,
  db: BenchDatabase,
  jobId: string,
  jobJson: unknown,
  tokens: readonly string[],
  o: { seconds: number; connections: number },
  say: (line: string) => void,
): Promise<HttpRound> {
  const baseline = await startBaseline(jobJson);
  const auth = { authorization: `Bearer ${server.token}` };
  const json = { 'content-type': 'application/json' };
  const run = async (name: string, opts: Parameters<typeof runLoad>[0]) => {
    const r = await runLoad(opts);
    say(`  ${name.padEnd(34)} ${String(r.rps).padStart(7)} req/s  p50 ${String(r.p50_ms).padStart(4)} ms  p99 ${String(r.p99_ms).padStart(4)} ms${r.failed ? `  (${r.failed} of ${r.total} failed!)` : ''}`);
    return r;
  };
  try {
    const common = { seconds: o.seconds, connections: o.connections };
    const baseGet = await run('bare Fastify GET (a job\'s JSON)', { ...common, url: `${baseline.url}/job` });
    const basePost = await run('bare Fastify POST (a create body)', { ...common, url: `${baseline.url}/job`, method: 'POST', headers: json, body: CREATE_BODY });
    const getJob = await run('GET /jobs/{id}', { ...common, url: `${server.url}/jobs/${jobId}`, headers: auth });
    const listJobs = await run('GET /jobs?limit=100', { ...common, url: `${server.url}/jobs?limit=100`, headers: auth });
    const createJob = await run(`POST ${CREATE_PATH}`, {
      ...common,
      url: `${server.url}${CREATE_PATH}`,
      method: 'POST',
      headers: { ...auth, ...json },
      body: CREATE_BODY,
      expectStatus: 201,
    });
    const drain = async () => {
      const unfinished = await countJobs(db, UNFINISHED);
      const t0 = performance.now();
      // The next figure starts with an empty queue.
      await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the workers to finish the created jobs', 300_000, 50);
      const seconds = (performance.now() - t0) / 1000;
      say(`  (${unfinished} jobs unfinished after the create run, finished ${seconds.toFixed(1)} s later)`);
      return { unfinished, seconds };
    };
    const { unfinished: unfinishedAfterCreate, seconds: drainSeconds } = await drain();
    const createJobSpread = await run(`POST, over ${tokens.length} workspaces`, {
      ...common,
      url: `${server.url}${CREATE_PATH}`,
      method: 'POST',
      headers: json,
      body: CREATE_BODY,
      tokens,
      expectStatus: 201,
    });
    await drain();
    return { baseGet, basePost, getJob, listJobs, createJob, createJobSpread, unfinishedAfterCreate, drainSeconds };
  } finally {
    await baseline.close();
  }
}

const figure = (r: LoadResult, base: LoadResult): RouteFigure => ({ rps: r.rps, p50_ms: r.p50_ms, p99_ms: r.p99_ms, ratio: ratio(r.rps, base.rps) });

export function httpFigures(r: HttpRound): { get_job: RouteFigure; list_jobs: RouteFigure; create_job: RouteFigure; create_job_16ws: RouteFigure } {
  return {
    get_job: figure(r.getJob, r.baseGet),
    list_jobs: figure(r.listJobs, r.baseGet),
    create_job: figure(r.createJob, r.basePost),
    create_job_16ws: figure(r.createJobSpread, r.basePost),
  };
}

/**
 * Drives each target of a round for `seconds`, unrecorded, and waits for the workers to finish the
 * jobs it made: the first figures of a process would otherwise include JIT compilation and cold
 * caches and pools.
 */
export async function warmUp(
  server: BenchServer,
  db: BenchDatabase,
  jobId: string,
  jobJson: unknown,
  tokens: readonly string[],
  o: { seconds: number; connections: number },
): Promise<void> {
  const baseline = await startBaseline(jobJson);
  const auth = { authorization: `Bearer ${server.token}` };
  const json = { 'content-type': 'application/json' };
  try {
    await runLoad({ ...o, url: `${baseline.url}/job` });
    await runLoad({ ...o, url: `${baseline.url}/job`, method: 'POST', headers: json, body: CREATE_BODY });
    await runLoad({ ...o, url: `${server.url}/jobs/${jobId}`, headers: auth });
    await runLoad({ ...o, url: `${server.url}/jobs?limit=100`, headers: auth });
    await runLoad({ ...o, url: `${server.url}${CREATE_PATH}`, method: 'POST', headers: { ...auth, ...json }, body: CREATE_BODY });
    await runLoad({ ...o, url: `${server.url}${CREATE_PATH}`, method: 'POST', headers: json, body: CREATE_BODY, tokens });
    await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the workers to finish the warm-up jobs', 300_000, 50);
  } finally {
    await baseline.close();
  }
}
