import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { READING_CACHE_MS } from '../../src/metrics/prom-metrics.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { PUBLIC_URL, createTestApp, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { hasSample, valueOf } from '../helpers/prometheus.js';
import { Receiver } from '../helpers/receiver.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789';

describe.each(backends)('/metrics: $name', (backend) => {
  let t: TestApp | undefined;
  let receiver: Receiver | undefined;
  let dispatcher: Dispatcher | undefined;
  let sender: WebhookSender | undefined;
  let api = '';
  afterEach(async () => {
    await sender?.stop();
    await dispatcher?.close();
    await receiver?.close();
    await t?.close();
    // A test that does not start() must not close the previous one's parts again.
    t = sender = dispatcher = receiver = undefined;
  });

  /** An app with a worker, listening on loopback, with both ways to /metrics. */
  async function start(engine: ScriptedEngine): Promise<TestApp> {
    t = await createTestApp({ backend, allowPrivateUrls: true, worker: { engine, pollMs: 50 }, metrics: { port: 0, token: METRICS_TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    api = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    receiver = await new Receiver().start();
    dispatcher = createGuardedDispatcher({ allowPrivate: true });
    sender = new WebhookSender(
      { webhooks: t.services.webhooks, signals: t.services.signals, clock: t.clock, dispatcher, publicUrl: () => PUBLIC_URL, log: silentLog },
      { concurrency: 2, pollMs: 1000, timeoutMs: 5000 },
    );
    return t;
  }

  /** GET /metrics on the API port with the metrics token; the cluster readings' cache is let expire first. */
  async function scrape(app: TestApp): Promise<string> {
    app.clock.advance(READING_CACHE_MS);
    const res = await fetch(`${api}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  }

  async function create(app: TestApp, webhook?: string): Promise<string> {
    const res = await fetch(`${api}/generate/${MODEL}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json', ...(webhook ? { 'x-webhook-url': webhook } : {}) },
      body: JSON.stringify({ prompt: 'a red fox' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { job_id: string }).job_id;
  }

  const statusOf = async (app: TestApp, id: string) => (await app.services.runs.find(id))?.status;
  const ended = (text: string, status: string) => valueOf(text, 'mediagen_jobs_ended_total', { model: MODEL, status });

  it('counts jobs, queue depth, charges, requests and webhook attempts as jobs run, and serves the same on metrics_port', async () => {
    const engine = new ScriptedEngine();
    const app = await start(engine);
    const before = await scrape(app);
    expect(valueOf(before, 'mediagen_jobs_created_total', { model: MODEL })).toBe(0);
    expect(valueOf(before, 'mediagen_queue_depth', { status: 'sampling' })).toBe(0);
    expect(valueOf(before, 'mediagen_queue_depth', { status: 'queued' })).toBe(0);
    expect(hasSample(before, 'mediagen_queue_depth')).toBe(true);
    expect(valueOf(before, 'mediagen_remote_workers_connected')).toBe(0);
    expect(hasSample(before, 'process_cpu_user_seconds_total')).toBe(true);
    expect(hasSample(before, 'nodejs_heap_size_used_bytes')).toBe(true);

    // One job held in `sampling`: created, and in the queue depth while it runs.
    engine.hold = deferred();
    const id = await create(app, `${receiver!.url}/hook`);
    await waitFor(async () => engine.sampling.includes(id), 'the job sampling');
    const running = await scrape(app);
    expect(valueOf(running, 'mediagen_jobs_created_total', { model: MODEL })).toBe(1);
    expect(valueOf(running, 'mediagen_queue_depth', { status: 'sampling' })).toBe(1);
    expect(valueOf(running, 'mediagen_job_dispatch_seconds_count', { model: MODEL })).toBe(1);
    expect(valueOf(running, 'mediagen_http_requests_total', { route: `/generate/${MODEL}`, method: 'POST', status: '200' })).toBe(1);
    expect(valueOf(running, 'mediagen_http_request_duration_seconds_count', { route: `/generate/${MODEL}`, method: 'POST' })).toBe(1);

    // It completes: counted once, charged its price, out of the queue depth; its webhook goes out.
    engine.hold.resolve();
    engine.hold = undefined;
    await waitFor(async () => (await statusOf(app, id)) === 'completed', 'the job completed');
    expect(await sender!.sendDue()).toBe(1);
    const done = await scrape(app);
    expect(ended(done, 'completed')).toBe(1);
    expect(valueOf(done, 'mediagen_queue_depth', { status: 'sampling' })).toBe(0);
    expect(valueOf(done, 'mediagen_job_run_seconds_count', { model: MODEL, status: 'completed' })).toBe(1);
    const charges = (await app.store.billing.listEntries(app.workspaceId)).filter((e) => e.kind === 'charge' && e.jobId === id);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amountMicros).toBeGreaterThan(0);
    expect(valueOf(done, 'mediagen_charges_micro_usd_total', { model: MODEL })).toBe(charges[0]!.amountMicros);
    expect(valueOf(done, 'mediagen_webhook_attempts_total', { outcome: 'delivered' })).toBe(1);

    // A failure, then a cancel of a running job (whose refused end is not counted as a failure).
    engine.failWith = new Error('the scripted engine fails');
    const failing = await create(app);
    await waitFor(async () => (await statusOf(app, failing)) === 'failed', 'the job failed');
    engine.failWith = undefined;
    engine.hold = deferred();
    const cancelled = await create(app);
    await waitFor(async () => engine.sampling.includes(cancelled), 'the job sampling');
    const res = await fetch(`${api}/jobs/${cancelled}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${app.token}` } });
    expect(res.status).toBe(200);
    await waitFor(async () => engine.aborted.includes(cancelled), 'the run aborted');
    // Requests by route template: the job id is never a label.
    await fetch(`${api}/jobs/${id}`, { headers: { authorization: `Bearer ${app.token}` } });
    await fetch(`${api}/no/such/route`);

    const after = await scrape(app);
    expect(valueOf(after, 'mediagen_jobs_created_total', { model: MODEL })).toBe(3);
    expect(ended(after, 'completed')).toBe(1);
    expect(ended(after, 'failed')).toBe(1);
    expect(ended(after, 'cancelled')).toBe(1);
    // Present and zero: valueOf alone would read an absent series (a failed reading) as 0 too.
    expect(hasSample(after, 'mediagen_queue_depth')).toBe(true);
    expect(valueOf(after, 'mediagen_queue_depth')).toBe(0);
    expect(valueOf(after, 'mediagen_charges_micro_usd_total', { model: MODEL })).toBe(charges[0]!.amountMicros);
    expect(valueOf(after, 'mediagen_http_requests_total', { route: '/jobs/:id', method: 'GET', status: '200' })).toBe(1);
    expect(valueOf(after, 'mediagen_http_requests_total', { route: '/jobs/:id/cancel', method: 'POST', status: '200' })).toBe(1);
    expect(valueOf(after, 'mediagen_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(after, 'mediagen_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(3);
    for (const secret of [id, app.token, METRICS_TOKEN, 'a red fox', receiver!.url]) expect(after).not.toContain(secret);

    // metrics_port: the same registry, no token, GET /metrics only.
    const own = await fetch(`${app.metricsUrl!}/metrics`);
    expect(own.status).toBe(200);
    const ownText = await own.text();
    expect(ended(ownText, 'failed')).toBe(1);
    expect(valueOf(ownText, 'mediagen_jobs_created_total', { model: MODEL })).toBe(3);
    const other = await fetch(`${app.metricsUrl!}/jobs`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: expect.any(String) });
    expect((await fetch(`${app.metricsUrl!}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('observes dispatch latency once per job: a claim after a shutdown hand-back is no first claim', async () => {
    t = await createTestApp({ backend, metrics: { token: METRICS_TOKEN } });
    const app = t;
    const res = await app.app.inject({
      method: 'POST',
      url: `/generate/${MODEL}`,
      headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
      payload: { prompt: 'a red fox' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = async () => {
      app.clock.advance(READING_CACHE_MS);
      const text = (await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
      return valueOf(text, 'mediagen_job_dispatch_seconds_count', { model: MODEL });
    };
    const first = await app.services.runs.claim();
    expect(first).toBeDefined();
    expect(await dispatched()).toBe(1);
    // A rolling restart hands it back uncounted (attempts back to 0); the next claim keeps started_at.
    expect(await app.services.runs.handBack(first!, { atShutdown: true })).toEqual({ kind: 'requeued' });
    app.clock.advance(1000);
    const again = await app.services.runs.claim();
    expect(again?.id).toBe(first!.id);
    expect(again!.attempts).toBe(1);
    expect(await dispatched()).toBe(1);
  });

  it('counts remote workers seen in the last minute (the presence rows, cluster-wide)', async () => {
    const app = await start(new ScriptedEngine());
    const { token } = await app.services.workerTokens.create('gpu', ['*']);
    const principal = await app.services.workerTokens.authenticate([`Bearer ${token}`]);
    await app.services.workerTokens.seen(principal, { workerId: 'box-1' });
    await app.services.workerTokens.seen(principal, { workerId: 'box-2' });
    expect(valueOf(await scrape(app), 'mediagen_remote_workers_connected')).toBe(2);
    // Unseen for longer than the live window: no longer connected.
    app.clock.advance(120_000);
    expect(valueOf(await scrape(app), 'mediagen_remote_workers_connected')).toBe(0);
  });

  it('refuses /metrics on the API port without the metrics token, with a wrong one, or with an API token (401)', async () => {
    const app = await start(new ScriptedEngine());
    const tries: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${app.token}` }, { authorization: METRICS_TOKEN }];
    for (const headers of tries) {
      const res = await fetch(`${api}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: expect.stringContaining('metrics') });
    }
  });
});

describe('/metrics off by default', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.close());

  it('has no /metrics route and no metrics server without metrics_port or metrics_token', async () => {
    t = await createTestApp();
    expect(t.metricsUrl).toBeUndefined();
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer anything' } });
    expect(res.statusCode).toBe(404);
  });

  it('with metrics_port only, the API port has no /metrics; neither way puts it in the API document', async () => {
    t = await createTestApp({ metrics: { port: 0 } });
    expect(t.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    await t.close();
    t = await createTestApp({ metrics: { token: METRICS_TOKEN } });
    expect(t.metricsUrl).toBeUndefined();
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).statusCode).toBe(200);
  });
});
