import { claimed, createJob, finished, next } from '../lib/client.js';
import { UNFINISHED, countJobs } from '../lib/database.js';
import type { BenchDatabase } from '../lib/database.js';
import type { FastEngine } from '../lib/fast-engine.js';
import { quantiles, sleep, waitUntil } from '../lib/stats.js';
import type { Quantiles } from '../lib/stats.js';
import type { BenchServer } from '../lib/wiring.js';
import { startWorkerProcess } from '../lib/worker-process.js';

/**
 * Embedded dispatch latency: from the commit of a job's creation (the store announces `queued` to
 * this process at commit) to the start of its run by this process's worker (the engine is called
 * right after the claim commits and the output directory is reset). One job at a time, each
 * waited for to the end, so no job queues behind another.
 */
export async function dispatchEmbedded(server: BenchServer, engine: FastEngine, db: BenchDatabase, samples: number): Promise<{ figures: Quantiles; n: number }> {
  const out: number[] = [];
  try {
    for (let i = 0; i <= samples; i++) {
      let committed: number | undefined;
      const off = server.onCommitted('queued', (at) => (committed ??= at));
      const started = next<{ id: string; at: number }>((resolve) => engine.onStart((id, at) => resolve({ id, at })), 'the worker to start a job');
      const id = await createJob(server);
      const run = await started;
      off();
      if (run.id !== id) throw new Error(`the worker started ${run.id}, not the job just created (${id})`);
      if (committed === undefined) throw new Error('no queued event was announced for the new job');
      // The first sample warms the path up and is not counted.
      if (i > 0) out.push(run.at - committed);
      await finished(db, id);
      await sleep(Math.random() * 3);
    }
  } finally {
    engine.onStart(undefined);
  }
  return { figures: quantiles(out), n: out.length };
}

/**
 * Dispatch latency with the API in this process and `mediagen serve --role worker` in another on
 * the same store. The claim's time is the job row's `started_at` (set from the worker's clock at
 * the claim, whole milliseconds), against the wall-clock time of the creation's commit here, so
 * each sample is good to about a millisecond. Jobs are made one at a time, each after a random
 * pause of up to one poll interval after the previous one ended (so they fall anywhere in the
 * worker's poll cycle), until `samples` are taken or `seconds` have passed.
 */
export async function dispatchSplit(
  server: BenchServer,
  db: BenchDatabase,
  o: { samples: number; seconds: number },
): Promise<{ figures: Quantiles; n: number }> {
  const worker = await startWorkerProcess({ dataDir: db.dataDir, databaseUrl: db.databaseUrl });
  const out: number[] = [];
  try {
    // One job first: the child's first run loads the renderer.
    await finished(db, await createJob(server), 120_000);
    const until = Date.now() + o.seconds * 1000;
    while (out.length < o.samples && Date.now() < until) {
      await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the previous job to end', 60_000, 3);
      // A random phase within the worker's poll interval: its poll timer restarts when a run ends,
      // and creating right then would measure the interval, not the dispatch.
      await sleep(Math.random() * server.pollMs);
      let committed: number | undefined;
      const off = server.onCommitted('queued', (at) => (committed ??= performance.timeOrigin + at));
      const id = await createJob(server);
      off();
      const row = await claimed(db, id);
      if (committed === undefined) throw new Error('no queued event was announced for the new job');
      out.push(Number(row.started_at) / 1000 - committed);
    }
    await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the worker process to finish its jobs', 60_000, 20);
  } finally {
    await worker.stop();
  }
  return { figures: quantiles(out), n: out.length };
}
