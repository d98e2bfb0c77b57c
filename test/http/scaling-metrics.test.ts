import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { READING_CACHE_MS } from '../../src/metrics/prom-metrics.js';
import { generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { hasSample, valueOf } from '../helpers/prometheus.js';
import { REMOTE_MODEL, remoteApp } from '../helpers/remote-worker.js';

const MODEL = 'image/vendor-b/model-b-1';
const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789';

/** Issue 40, point 6: the series to autoscale on, per model and the engine its jobs wait for. */
describe.each(backends)('scaling signals on /metrics: $name', (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function scrape(app: TestApp, api: string): Promise<string> {
    app.clock.advance(READING_CACHE_MS);
    const res = await fetch(`${api}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  }

  it('shows per model and engine the jobs waiting, the oldest wait and the jobs running, and leaves out models with neither', async () => {
    const app = (t = await remoteApp({ backend, metrics: { port: 0, token: METRICS_TOKEN }, limits: { maxConcurrentJobs: 10, maxBackloggedJobs: 0 } }));
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const empty = await scrape(app, api);
    expect(hasSample(empty, 'mediagen_queue_waiting')).toBe(false);

    const create = async (model: string) => {
      const body = model === REMOTE_MODEL ? { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' } : { prompt: 'a red fox' };
      const res = await generate(app, model, body);
      expect(res.statusCode, res.body).toBe(200);
    };
    await create(MODEL);
    app.clock.advance(30_000);
    await create(MODEL);
    await create(MODEL);
    await create(REMOTE_MODEL);
    // The in-process worker (not started here) would take one of MODEL's jobs: it is claimed.
    expect(await app.services.runs.claimMany(1, { except: [REMOTE_MODEL] })).toHaveLength(1);

    const text = await scrape(app, api);
    const local = { model: MODEL, engine: 'local' };
    const remote = { model: REMOTE_MODEL, engine: 'remote:gpu-a' };
    expect(valueOf(text, 'mediagen_queue_waiting', local)).toBe(2);
    expect(valueOf(text, 'mediagen_queue_running', local)).toBe(1);
    // The oldest still waiting was created after the 30 s step (creation times step a microsecond); the scrape let the cache expire once.
    expect(valueOf(text, 'mediagen_queue_oldest_wait_seconds', local)).toBeCloseTo(READING_CACHE_MS / 1000, 3);
    expect(valueOf(text, 'mediagen_queue_waiting', remote)).toBe(1);
    expect(valueOf(text, 'mediagen_queue_running', remote)).toBe(0);
    expect(valueOf(text, 'mediagen_queue_oldest_wait_seconds', remote)).toBeCloseTo(READING_CACHE_MS / 1000, 3);

    app.clock.advance(60_000);
    const later = await scrape(app, api);
    expect(valueOf(later, 'mediagen_queue_oldest_wait_seconds', remote)).toBeCloseTo(60 + (2 * READING_CACHE_MS) / 1000, 3);
  });
});
