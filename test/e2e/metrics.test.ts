import { afterEach, describe, expect, it } from 'vitest';
import { hasSample, valueOf } from '../helpers/prometheus.js';
import { api, cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };
const WORKER_LINE = /^mediagen: running up to \d+ jobs at once/;
const METRICS_LINE = /^mediagen: metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics$/m;

async function metricsUrl(server: Server): Promise<string> {
  const [, url] = await server.waitForStdout(METRICS_LINE);
  return url!;
}

async function scrape(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
}

/**
 * `serve --metrics-port` on the compiled binary: a `worker` process has no API listener, yet is
 * scraped on its metrics port; each process counts what it did, and both read the same queue.
 */
describe('metrics on the compiled binary', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('a --role worker process answers /metrics on --metrics-port and counts the jobs it ran; the api process counts their creation', async () => {
    const dir = tempDir();
    const apiProcess = await startServer(['--role', 'api', '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--data-dir', dir]);
    const [, token] = await apiProcess.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const apiMetrics = await metricsUrl(apiProcess);
    const worker = await startServer(
      ['--role', 'worker', '--host', '127.0.0.1', '--metrics-port', '0', '--data-dir', dir, '--engine-latency-ms', '0', '--poll-interval-ms', '200'],
      { firstLine: WORKER_LINE },
    );
    const workerMetrics = await metricsUrl(worker);
    expect(hasSample(await scrape(workerMetrics), 'process_resident_memory_bytes')).toBe(true);

    const created = await api(apiProcess.url, `/generate/${MODEL}`, token!, { method: 'POST', body: BODY });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.job_id as string;
    const until = Date.now() + 30_000;
    while ((await api(apiProcess.url, `/jobs/${id}`, token!)).body.status !== 'completed') {
      if (Date.now() > until) throw new Error(`job ${id} did not complete`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const fromWorker = await scrape(workerMetrics);
    expect(valueOf(fromWorker, 'mediagen_jobs_ended_total', { model: MODEL, status: 'completed' })).toBe(1);
    expect(valueOf(fromWorker, 'mediagen_job_dispatch_seconds_count', { model: MODEL })).toBe(1);
    expect(valueOf(fromWorker, 'mediagen_charges_micro_usd_total', { model: MODEL })).toBeGreaterThan(0);
    // The worker created nothing and serves no API: no creations, no requests of its own.
    expect(valueOf(fromWorker, 'mediagen_jobs_created_total')).toBe(0);
    expect(valueOf(fromWorker, 'mediagen_http_requests_total')).toBe(0);
    expect(hasSample(fromWorker, 'mediagen_queue_depth')).toBe(true);

    const fromApi = await scrape(apiMetrics);
    expect(valueOf(fromApi, 'mediagen_jobs_created_total', { model: MODEL })).toBe(1);
    expect(valueOf(fromApi, 'mediagen_jobs_ended_total')).toBe(0);
    expect(valueOf(fromApi, 'mediagen_http_requests_total', { route: `/generate/${MODEL}`, method: 'POST', status: '200' })).toBe(1);
    // The API port itself has no /metrics without a metrics token.
    expect((await fetch(`${apiProcess.url}/metrics`)).status).toBe(404);

    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(await apiProcess.stop()).toEqual({ code: 0, signal: null });
  });

  it('refuses to start when the metrics port is taken, naming it', async () => {
    const first = await startServer(['--role', 'worker', '--host', '127.0.0.1', '--metrics-port', '0', '--data-dir', tempDir()], { firstLine: WORKER_LINE });
    const port = new URL(await metricsUrl(first)).port;
    const second = await startServer(['--role', 'worker', '--host', '127.0.0.1', '--metrics-port', port, '--data-dir', tempDir()], { firstLine: /^mediagen: cannot listen/ }).catch(
      (err: Error) => err,
    );
    expect(String(second)).toContain(`port ${port} for metrics`);
  });
});
