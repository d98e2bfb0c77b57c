import { createJob, finished } from './lib/client.js';
import type { BenchDatabase } from './lib/database.js';
import { FastEngine } from './lib/fast-engine.js';
import { emptyResult } from './lib/results.js';
import type { BackendResult } from './lib/results.js';
import { seedJobs } from './lib/seed.js';
import type { Settings } from './lib/settings.js';
import { startServer } from './lib/wiring.js';
import { dispatchEmbedded, dispatchSplit } from './measure/dispatch.js';
import { httpFigures, httpRound, warmUp } from './measure/http.js';
import { scaleRatios, storeScale } from './measure/scale.js';
import type { ScalePoint } from './measure/scale.js';
import { createOnlyThroughput, pipelineThroughput } from './measure/pipeline.js';
import { webhookLatency } from './measure/webhook.js';

export interface BackendRun {
  readonly result: BackendResult;
  /** What the table and machine.json add: sample counts, seeding times, failures of a phase. */
  readonly notes: string[];
}

/**
 * Every measure on one backend, in an order that keeps them apart: the HTTP round with the small
 * number of stored jobs, the one-job-at-a-time latencies, the pipeline, the split deployment (this
 * process's worker stopped, a worker process started); then store scale on two more databases
 * (`makeDb`), a small and a large one side by side. A phase that fails leaves its figures null and the run goes on.
 */
export async function runBackend(db: BenchDatabase, makeDb: () => Promise<BenchDatabase>, s: Settings, say: (line: string) => void): Promise<BackendRun> {
  const result = emptyResult();
  const notes: string[] = [];
  const note = (line: string) => {
    notes.push(line);
    say(`  ${line}`);
  };
  const phase = async (name: string, fn: () => Promise<void>) => {
    say(`[${db.backend}] ${name}`);
    const t0 = performance.now();
    try {
      await fn();
    } catch (err) {
      note(`${name} failed: ${(err as Error).message}`);
    }
    say(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  };

  const engine = new FastEngine();
  const server = await startServer({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, engine, workerConcurrency: s.workerConcurrency });
  try {
    // A finished job: GET /jobs/{id} reads it, the bare GET answers its JSON, seeding copies its row.
    const templateId = await createJob(server);
    await finished(db, templateId);
    const jobJson = (await (await fetch(`${server.url}/jobs/${templateId}`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as unknown;
    const seed = async (total: number) => {
      const [row] = await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM jobs');
      const add = total - Number(row?.n ?? 0);
      const ms = await seedJobs(db, templateId, 1, add);
      note(`seeded ${Math.max(0, add).toLocaleString('en')} jobs in ${(ms / 1000).toFixed(1)} s (${total.toLocaleString('en')} stored)`);
    };
    const round = { seconds: s.httpSeconds, connections: s.connections };
    // The spread create run's workspaces, each with its own token, balance and the default's limits.
    const tokens = await server.addWorkspaces(s.spreadWorkspaces);

    await phase(`HTTP with ${s.smallStore.toLocaleString('en')} stored jobs, ${s.httpSeconds} s per run, ${s.connections} connections`, async () => {
      await warmUp(server, db, templateId, jobJson, tokens, { seconds: s.warmupSeconds, connections: s.connections });
      await seed(s.smallStore);
      const r = await httpRound(server, db, templateId, jobJson, tokens, round, say);
      result.http = httpFigures(r);
      notes.push(`${r.unfinishedAfterCreate} jobs unfinished after the create run`);
    });
    await phase(`dispatch latency, embedded (${s.dispatchSamples} jobs one at a time)`, async () => {
      const r = await dispatchEmbedded(server, engine, db, s.dispatchSamples);
      result.dispatch_ms = r.figures;
      say(`  p50 ${r.figures.p50} ms, p99 ${r.figures.p99} ms (${r.n} samples)`);
    });
    await phase(`webhook latency (${s.webhookSamples} jobs one at a time)`, async () => {
      const r = await webhookLatency(server, s.webhookSamples);
      result.webhook_ms = r.figures;
      say(`  p50 ${r.figures.p50} ms, p99 ${r.figures.p99} ms (${r.n} samples)`);
    });
    await phase(`pipeline throughput (${s.pipelineJobs} jobs, ${s.pipelineConcurrency} creates in flight, ${s.workerConcurrency} job slots)`, async () => {
      const r = await pipelineThroughput(server, db, { jobs: s.pipelineJobs, concurrency: s.pipelineConcurrency });
      result.pipeline.jobs_per_s = r.jobs_per_s;
      say(`  ${r.jobs_per_s} jobs/s${r.failed ? ` (${r.failed} not completed!)` : ''}`);
    });
    await phase(`create-only pipeline (the same ${s.pipelineJobs} creates, ${s.pipelineConcurrency} in flight, timed to the last create's answer)`, async () => {
      const r = await createOnlyThroughput(server, db, { jobs: s.pipelineJobs, concurrency: s.pipelineConcurrency });
      result.pipeline.create_only_jobs_per_s = r.jobs_per_s;
      say(`  ${r.jobs_per_s} jobs/s${r.failed ? ` (${r.failed} creates failed!)` : ''}`);
    });
    await phase(`dispatch latency, API here and \`serve --role worker\` in another process (up to ${s.splitSamples} jobs or ${s.splitSeconds} s)`, async () => {
      await server.stopRunner();
      try {
        const r = await dispatchSplit(server, db, { samples: s.splitSamples, seconds: s.splitSeconds });
        result.dispatch_split_ms = r.figures;
        note(`split dispatch: p50 ${r.figures.p50} ms, p99 ${r.figures.p99} ms (${r.n} samples)`);
      } finally {
        await server.startRunner();
      }
    });
  } finally {
    await server.close();
  }
  await phase(`store scale, ${s.smallStore.toLocaleString('en')} against ${s.largeStore.toLocaleString('en')} stored jobs (two stores side by side, ${s.scaleRequests} requests of each kind to each, one at a time)`, async () => {
    const r = await storeScale(makeDb, { small: s.smallStore, large: s.largeStore, requests: s.scaleRequests, workerConcurrency: s.workerConcurrency }, say);
    const point = (p: ScalePoint) => `get ${p.get}, list ${p.list}, create ${p.create}`;
    note(`median ms per request, ${s.smallStore.toLocaleString('en')} stored: ${point(r.small)}; ${s.largeStore.toLocaleString('en')} stored: ${point(r.large)}`);
    result.store_scale = scaleRatios(r.small, r.large);
    const q = result.store_scale;
    say(`  time per request, large / small: get ${q.get_ratio}, list ${q.list_ratio}, create ${q.create_ratio}`);
  });
  return { result, notes };
}
