import { createJob } from '../lib/client.js';
import { UNFINISHED, countJobs } from '../lib/database.js';
import type { BenchDatabase } from '../lib/database.js';
import { percentile, ratio, round, waitUntil } from '../lib/stats.js';
import type { BenchServer } from '../lib/wiring.js';

/** Median milliseconds of one request of each kind at one store size. */
export interface ScalePoint {
  readonly get: number;
  readonly list: number;
  readonly create: number;
}

/**
 * Times `n` requests of each kind one after another over HTTP (workers running, so each created
 * job is run) and keeps the median: on a shared machine a median of sequential requests moves far
 * less with the load of other processes than a throughput does. The first tenth warms up and is
 * not counted.
 */
export async function scalePoint(server: BenchServer, db: BenchDatabase, jobId: string, n: number): Promise<ScalePoint> {
  const headers = { authorization: `Bearer ${server.token}` };
  const time = async (what: string, fn: () => Promise<void>) => {
    const warm = Math.ceil(n / 10);
    const out: number[] = [];
    for (let i = 0; i < warm + n; i++) {
      const t0 = performance.now();
      await fn();
      if (i >= warm) out.push(performance.now() - t0);
    }
    const median = percentile(out, 50);
    if (median === null) throw new Error(`no ${what} timed`);
    return round(median, 3)!;
  };
  const read = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers });
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    await res.arrayBuffer();
  };
  const get = await time('get', () => read(`/jobs/${jobId}`));
  const list = await time('list', () => read('/jobs?limit=100'));
  const create = await time('create', async () => void (await createJob(server)));
  await waitUntil(async () => (await countJobs(db, UNFINISHED)) === 0, 'the workers to finish the created jobs', 120_000, 20);
  return { get, list, create };
}

/** Time per request with the large store over the small one: 1.0 is no slower; the target is at most 1.5. */
export function scaleRatios(small: ScalePoint, large: ScalePoint): { get_ratio: number | null; list_ratio: number | null; create_ratio: number | null } {
  return { get_ratio: ratio(large.get, small.get), list_ratio: ratio(large.list, small.list), create_ratio: ratio(large.create, small.create) };
}
