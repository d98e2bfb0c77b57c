import { createJob, finished } from '../lib/client.js';
import type { BenchDatabase } from '../lib/database.js';
import { FastEngine } from '../lib/fast-engine.js';
import { seedJobs } from '../lib/seed.js';
import { percentile, ratio, round } from '../lib/stats.js';
import { startServer } from '../lib/wiring.js';
import type { BenchServer } from '../lib/wiring.js';

/** Median milliseconds of one request of each kind at one store size. */
export interface ScalePoint {
  readonly get: number | null;
  readonly list: number | null;
  readonly create: number | null;
}

interface Side {
  readonly db: BenchDatabase;
  readonly server: BenchServer;
  readonly jobId: string;
  readonly seedSeconds: number;
}

/** A fresh database and server (workers running) holding `jobs` finished jobs. */
async function side(makeDb: () => Promise<BenchDatabase>, jobs: number, workerConcurrency: number): Promise<Side> {
  const db = await makeDb();
  try {
    const server = await startServer({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, engine: new FastEngine(), workerConcurrency });
    const jobId = await createJob(server);
    await finished(db, jobId);
    const ms = await seedJobs(db, jobId, 1, jobs - 1);
    return { db, server, jobId, seedSeconds: ms / 1000 };
  } catch (err) {
    await db.drop();
    throw err;
  }
}

/**
 * Store scale: two stores of the backend side by side, one with `small` jobs and one with
 * `large`, each with its own server in this process. Requests of each kind go to the two in
 * turn, one at a time (which goes first alternates), and each side keeps the median: on a shared
 * machine the load of other processes then weighs on both sides alike. The first tenth warms up.
 * (A third as many creates as reads.)
 */
export async function storeScale(
  makeDb: () => Promise<BenchDatabase>,
  o: { small: number; large: number; requests: number; workerConcurrency: number },
  say: (line: string) => void,
): Promise<{ small: ScalePoint; large: ScalePoint }> {
  const a = await side(makeDb, o.small, o.workerConcurrency);
  let b: Side | undefined;
  try {
    b = await side(makeDb, o.large, o.workerConcurrency);
    say(`  seeded ${o.small.toLocaleString('en')} jobs in ${a.seedSeconds.toFixed(1)} s and ${o.large.toLocaleString('en')} in ${b.seedSeconds.toFixed(1)} s`);
    const sides = [a, b] as const;
    const read = async (s: Side, path: string) => {
      const res = await fetch(`${s.server.url}${path}`, { headers: { authorization: `Bearer ${s.server.token}` } });
      if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
      await res.arrayBuffer();
    };
    // `after` runs untimed after each request: a created job is run to its end before the next
    // request, so neither side's worker is busy (on SQLite, blocking this process) while the other is timed.
    const time = async (n: number, fn: (s: Side) => Promise<unknown>, after?: (s: Side, v: unknown) => Promise<unknown>): Promise<[number | null, number | null]> => {
      const warm = Math.ceil(n / 10);
      const out: [number[], number[]] = [[], []];
      for (let i = 0; i < warm + n; i++) {
        for (const k of i % 2 ? [1, 0] : [0, 1]) {
          const t0 = performance.now();
          const v = await fn(sides[k]!);
          if (i >= warm) out[k as 0 | 1].push(performance.now() - t0);
          await after?.(sides[k]!, v);
        }
      }
      return [round(percentile(out[0], 50), 3), round(percentile(out[1], 50), 3)];
    };
    const get = await time(o.requests, (s) => read(s, `/jobs/${s.jobId}`));
    const list = await time(o.requests, (s) => read(s, '/jobs?limit=100'));
    // A third as many creates: on a slow store each is followed by its whole run.
    const create = await time(Math.ceil(o.requests / 3), (s) => createJob(s.server), (s, id) => finished(s.db, id as string));
    return { small: { get: get[0], list: list[0], create: create[0] }, large: { get: get[1], list: list[1], create: create[1] } };
  } finally {
    for (const s of [a, b]) {
      if (!s) continue;
      await s.server.close();
      await s.db.drop();
    }
  }
}

/** Time per request with the large store over the small one: 1.0 is no slower; the target is at most 1.5. */
export function scaleRatios(small: ScalePoint, large: ScalePoint): { get_ratio: number | null; list_ratio: number | null; create_ratio: number | null } {
  return { get_ratio: ratio(large.get, small.get), list_ratio: ratio(large.list, small.list), create_ratio: ratio(large.create, small.create) };
}
