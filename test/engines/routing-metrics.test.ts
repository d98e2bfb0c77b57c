import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { valueOf } from '../helpers/prometheus.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { FAL_TEST_KEY, falModel } from './routing-fixtures.js';

/**
 * The scaling series of a chained model (docs/routing.md, "Scaling signals"): a running job counts
 * for the engine of its chain that took it, recorded when the router hands the job over, not for
 * the chain's first engine. A real app and worker on a real store, fal as a fake on loopback.
 */

const MODEL = 'image/acme/chained-v1';
const CUSTOM = falModel(MODEL, 'provider:first');

describe.each(backends)('scaling series of a chain: $name', { timeout: 60_000 }, (backend) => {
  let second: FakeFal | undefined;
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    await second?.close();
    t = second = undefined;
    clearFalJwksCache();
  });

  it('a job running on the second engine of its chain counts as running there, not on the first', async () => {
    second = await startFakeFal({ hold: true });
    const fal = (url: string) => ({ type: 'fal', base_url: url, api_key_env: 'FAL_KEY', storage_url: second!.storageUrl, poll_interval_ms: 20 });
    t = await createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [CUSTOM],
      routing: { model_engines: { [MODEL]: ['provider:first', 'provider:second'] } },
      providers: { providers: { first: fal(`http://127.0.0.1:${await freePort()}`), second: fal(second.url) }, env: { FAL_KEY: FAL_TEST_KEY } },
      worker: { pollMs: 50, log: silentLog, allowPrivateUrls: true },
      metrics: { port: 0 },
    });
    const res = await generate(t, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    // Held at the second engine: submitted there and polled.
    for (let i = 0; i < 400 && second.submissions() === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(second.submissions()).toBe(1);
    expect((await get(t, `/jobs/${id}`)).json<{ status: string }>().status).not.toMatch(/queued|completed|failed/);
    const text = await (await fetch(`${t.metricsUrl!}/metrics`)).text();
    expect(valueOf(text, 'mediagen_queue_running', { model: MODEL, engine: 'provider:second' })).toBe(1);
    expect(valueOf(text, 'mediagen_queue_running', { model: MODEL, engine: 'provider:first' })).toBe(0);
    second.release();
    expect((await jobEnd(t, id, 20_000)).status).toBe('completed');
  });
});
