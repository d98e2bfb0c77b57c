import { UNFINISHED, countJobs } from '../lib/database.js';
import type { BenchDatabase } from '../lib/database.js';
import { runLoad } from '../lib/load.js';
import { CREATE_BODY, CREATE_PATH } from '../lib/settings.js';
import { round, waitUntil } from '../lib/stats.js';
import type { BenchServer } from '../lib/wiring.js';

/**
 * Pipeline throughput: `jobs` creates sent over HTTP with `concurrency` in flight while the
 * in-process worker runs them at zero simulated latency; jobs per second from the first create
 * to the last job's completion.
 */
export async function pipelineThroughput(
  server: BenchServer,
  db: BenchDatabase,
  o: { jobs: number; concurrency: number },
): Promise<{ jobs_per_s: number | null; failed: number }> {
  const before = await countJobs(db, ['completed']);
  const t0 = performance.now();
  const load = await runLoad({
    url: `${server.url}${CREATE_PATH}`,
    amount: o.jobs,
    connections: o.concurrency,
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: CREATE_BODY,
    expectStatus: 201,
  });
  const created = load.total - load.failed;
  await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the pipeline jobs to finish', 300_000, 10);
  const seconds = (performance.now() - t0) / 1000;
  const completed = (await countJobs(db, ['completed'])) - before;
  return { jobs_per_s: round(completed / seconds, 1), failed: load.failed + (created - completed) };
}

/**
 * The creates of the pipeline alone: the same `jobs` creates with `concurrency` in flight, the
 * in-process worker running, jobs per second from the first create to the last create's answer.
 * Then waits, untimed, for the worker to finish them, so the next phase starts with an empty queue.
 */
export async function createOnlyThroughput(
  server: BenchServer,
  db: BenchDatabase,
  o: { jobs: number; concurrency: number },
): Promise<{ jobs_per_s: number | null; failed: number }> {
  const t0 = performance.now();
  const load = await runLoad({
    url: `${server.url}${CREATE_PATH}`,
    amount: o.jobs,
    connections: o.concurrency,
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: CREATE_BODY,
    expectStatus: 201,
  });
  const seconds = (load.lastAnswerAt - t0) / 1000;
  await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the create-only jobs to finish', 300_000, 10);
  return { jobs_per_s: round((load.total - load.failed) / seconds, 1), failed: load.failed };
}
