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
import { scalePoint, scaleRatios } from './measure/scale.js';
import type { ScalePoint } from './measure/scale.js';
import { pipelineThroughput } from './measure/pipeline.js';
import { webhookLatency } from './measure/webhook.js';

export interface BackendRun {
  readonly result: BackendResult;
  /** What the table and machine.json add: sample counts, seeding times, failures of a phase. */
  readonly notes: string[];
}

/**
 * Every measure on one backend, in an order that keeps them apart: request times at the small
 * store size, the HTTP round, the one-job-at-a-time latencies, the pipeline, the split deployment
 * (this process's worker stopped, a worker process started), then the store grown to the large
 * size and its request times. A phase that fails leaves its figures null and the run goes on.
 */
export async function runBackend(db: BenchDatabase, s: Settings, say: (line: string) => void): Promise<BackendRun> {
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
      const have = Number(row?.n ?? 0);
      // Copy numbers continue where the last seeding stopped (copy i is i ms older than the template).
      const [last] = await db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM jobs WHERE output_key LIKE 'seed%'");
      const from = Number(last?.n ?? 0) + 1;
      const add = total - have;
      const ms = await seedJobs(db, templateId, from, from + add - 1);
      note(`seeded ${Math.max(0, add).toLocaleString('en')} jobs in ${(ms / 1000).toFixed(1)} s (${total.toLocaleString('en')} stored)`);
    };
    const round = { seconds: s.httpSeconds, connections: s.connections };

    let small: ScalePoint | undefined;
    const point = (p: ScalePoint) => `median ms per request: get ${p.get}, list ${p.list}, create ${p.create}`;
    await phase(`store scale at ${s.smallStore.toLocaleString('en')} stored jobs (after a warm-up; ${s.scaleRequests} requests of each kind, one at a time)`, async () => {
      await warmUp(server, db, templateId, jobJson, { seconds: s.warmupSeconds, connections: s.connections });
      await seed(s.smallStore);
      small = await scalePoint(server, db, templateId, s.scaleRequests);
      note(`${s.smallStore.toLocaleString('en')} stored: ${point(small)}`);
    });
    await phase(`HTTP, ${s.httpSeconds} s per run, ${s.connections} connections`, async () => {
      const r = await httpRound(server, db, templateId, jobJson, round, say);
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
      result.pipeline = { jobs_per_s: r.jobs_per_s };
      say(`  ${r.jobs_per_s} jobs/s${r.failed ? ` (${r.failed} not completed!)` : ''}`);
    });
    await phase(`dispatch latency, API here and \`serve --role worker\` in another process (up to ${s.splitSamples} jobs or ${s.splitSeconds} s)`, async () => {
      await server.stopRunner();
      try {
        const r = await dispatchSplit(server, db, { samples: s.splitSamples, seconds: s.splitSeconds });
        result.dispatch_split_ms = r.figures;
        note(`split dispatch: p50 ${r.figures.p50} ms, p99 ${r.figures.p99} ms (${r.n} samples)`);
      } finally {
        await server.startRunner(engine, s.workerConcurrency);
      }
    });
    await phase(`store scale at ${s.largeStore.toLocaleString('en')} stored jobs`, async () => {
      if (!small) throw new Error(`no figures at ${s.smallStore} stored jobs to compare with`);
      await seed(s.largeStore);
      const large = await scalePoint(server, db, templateId, s.scaleRequests);
      note(`${s.largeStore.toLocaleString('en')} stored: ${point(large)}`);
      result.store_scale = scaleRatios(small, large);
      const r = result.store_scale;
      say(`  time per request, ${s.largeStore.toLocaleString('en')} / ${s.smallStore.toLocaleString('en')} stored: get ${r.get_ratio}, list ${r.list_ratio}, create ${r.create_ratio}`);
    });
  } finally {
    await server.close();
  }
  return { result, notes };
}
