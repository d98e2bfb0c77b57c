import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeOpenAi } from './fakes/fake-openai.js';
import type { FakeOpenAi } from './fakes/fake-openai.js';
import { startFakeKrea } from './fakes/fake-krea.js';
import type { FakeKrea } from './fakes/fake-krea.js';
import type { Log } from '../../src/lib/log.js';

/**
 * Whole job runs of provider-bound models (docs/providers.md): a real app and worker on a real
 * store, the provider a fake written from its documentation on loopback (test/providers/fakes/).
 */

const MODEL = 'image/vendor-b/model-b-1';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** Every line the worker logged, as JSON text, to look for secrets in. */
function recordingLog(lines: string[]): Log {
  const put = (level: string) => (obj: object, msg: string) => void lines.push(JSON.stringify({ level, msg, ...obj }));
  return { info: put('info'), warn: put('warn'), error: put('error') };
}

async function appFor(provider: Json, opts: { upstream?: Json; env: Record<string, string>; log?: string[]; backend?: (typeof backends)[number]; timeoutMs?: number; outputMax?: number; metricsToken?: string }) {
  return createTestApp({
    ...(opts.metricsToken ? { metrics: { token: opts.metricsToken } } : {}),
    realClock: true,
    ...(opts.backend ? { backend: opts.backend } : {}),
    modelEngines: { [MODEL]: 'provider:up' },
    providers: { providers: { up: provider }, upstream: opts.upstream ?? {}, env: opts.env },
    worker: { pollMs: 50, ...(opts.log ? { log: recordingLog(opts.log) } : { log: silentLog }) },
    ...(opts.timeoutMs ? { runPolicy: { timeoutMs: () => opts.timeoutMs! } } : {}),
    ...(opts.outputMax !== undefined ? { workerOutputMaxBytes: opts.outputMax } : {}),
  });
}

const create = async (t: TestApp, body: Json = { prompt: 'a red fox', width: 512, height: 512 }) => {
  const res = await generate(t, MODEL, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ job_id: string }>().job_id;
};

const ended = (t: TestApp, id: string, timeoutMs = 20_000) => jobEnd(t, id, timeoutMs);

const statusOf = async (t: TestApp, id: string) => (await get(t, `/jobs/${id}`)).json<{ status: string }>().status;

describe.each(backends)('provider runs: $name', (backend) => {
  let oai: FakeOpenAi;
  let krea: FakeKrea;
  beforeAll(async () => {
    oai = await startFakeOpenAi();
    krea = await startFakeKrea();
  });
  afterAll(async () => {
    await oai.close();
    await krea.close();
  });
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('runs a job at an OpenAI-shaped provider: the template sent with the key, the PNG stored and served here, billed once, the usage in the details', async () => {
    const lines: string[] = [];
    t = await appFor(
      { type: 'openai', base_url: oai.url, api_key_env: 'OAI_KEY', poll_interval_ms: 20 },
      { env: { OAI_KEY: oai.apiKey }, upstream: { [MODEL]: { model: 'gpt-image-1', input: { prompt: 'photo: {{prompt}}', size: '1024x1024', n: 1 } } }, log: lines, backend },
    );
    const before = oai.submissions;
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = oai.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${oai.apiKey}`);
    expect(sent.body).toEqual({ model: 'gpt-image-1', prompt: 'photo: a red fox', size: '1024x1024', n: 1 });
    expect(oai.submissions - before).toBe(1);
    const url = (job.result as { urls: string[] }).urls[0]!;
    expect(url).toMatch(/^http:\/\/mediagen\.test\/outputs\/[^/]+\/output\.png$/);
    const file = await t.app.inject({ method: 'GET', url: new URL(url).pathname });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.subarray(0, 4)).toEqual(PNG_MAGIC);
    const entries = await t.store.billing.entriesOfJob(id);
    expect(entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    const details = (await get(t, `/jobs/${id}/details`)).json<{ upstream: Json; billing: string }>();
    expect(details.billing).toBe('charged');
    expect(details.upstream, JSON.stringify(details.upstream)).toMatchObject({ provider: 'up', id: `sync-${id}`, status: 'completed' });
    expect(details.upstream.usage).toMatchObject({ total_tokens: expect.any(Number) });
    // The key is nowhere a client or an operator reads.
    const doc = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    for (const text of [JSON.stringify(job), JSON.stringify(details), doc.body, lines.join('\n')]) expect(text).not.toContain(oai.apiKey);
  });

  it('follows a krea upstream through its statuses to sampling and completion', async () => {
    krea.statuses = ['queued', 'processing', 'sampling', 'sampling', 'completed'];
    t = await appFor({ type: 'krea', base_url: krea.url, api_key_env: 'UP_TOKEN', poll_interval_ms: 20 }, { env: { UP_TOKEN: krea.token }, backend });
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const timeline = (await get(t, `/jobs/${id}/details`)).json<{ timeline: { status: string }[] }>().timeline.map((s) => s.status);
    expect(timeline).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'completed']);
    const submitted = krea.requests.find((r) => r.method === 'POST')!;
    expect(submitted.path).toBe(`/generate/${MODEL}`);
    expect(submitted.headers['idempotency-key']).toBe(id);
  });

  it('resumes the same provider job after its worker stopped mid-run, never submitting it twice', async () => {
    krea.statuses = ['processing'];
    const lines: string[] = [];
    t = await appFor({ type: 'krea', base_url: krea.url, api_key_env: 'UP_TOKEN', poll_interval_ms: 20 }, { env: { UP_TOKEN: krea.token }, backend, log: lines });
    const before = krea.submissions;
    const id = await create(t);
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling at the provider');
    await t.worker!.stop(0);
    expect(['queued', 'scheduled']).toContain(await statusOf(t, id));
    krea.statuses = ['completed'];
    await t.startWorker({ pollMs: 50 });
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job) + lines.join('\n')).toBe('completed');
    expect(krea.submissions - before).toBe(1);
    expect(krea.cancels).not.toContain((await t.store.upstreams.find(id))!.id);
  });
});

describe('provider runs: failures and cancels', () => {
  let oai: FakeOpenAi;
  let krea: FakeKrea;
  beforeAll(async () => {
    oai = await startFakeOpenAi();
    krea = await startFakeKrea();
  });
  afterAll(async () => {
    await oai.close();
    await krea.close();
  });
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const openai = (extra: Json = {}, opts: Parameters<typeof appFor>[1] = { env: {} }) =>
    appFor({ type: 'openai', base_url: `${oai.url}/v1`, api_key_env: 'OAI_KEY', poll_interval_ms: 20, ...extra }, { ...opts, env: { OAI_KEY: oai.apiKey }, upstream: { [MODEL]: { model: 'gpt-image-1' } } });
  const kreaApp = (opts: Omit<Parameters<typeof appFor>[1], 'env'> = {}) =>
    appFor({ type: 'krea', base_url: krea.url, api_key_env: 'UP_TOKEN', poll_interval_ms: 20 }, { ...opts, env: { UP_TOKEN: krea.token } });

  it("cancelling the job cancels the provider's job too", async () => {
    krea.statuses = ['processing'];
    t = await kreaApp();
    const id = await create(t);
    await waitFor(async () => (await statusOf(t!, id)) === 'sampling', 'the job to be sampling');
    const upstreamId = (await t.store.upstreams.find(id))!.id;
    const res = await checkedInject(t.app, { method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => krea.cancels.includes(upstreamId), 'the cancel to reach the provider');
  });

  it('cancels at the provider and fails with timeout a job the provider has not finished in time', async () => {
    krea.statuses = ['processing'];
    t = await kreaApp({ timeoutMs: 1500 });
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.error).toMatchObject({ code: 'timeout' });
    const upstreamId = (await t.store.upstreams.find(id))!.id;
    await waitFor(async () => krea.cancels.includes(upstreamId), 'the cancel to reach the provider');
  });

  it('waits out a 429 for its Retry-After, then completes', async () => {
    t = await openai();
    oai.fail429(1, 2);
    const started = Date.now();
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    // Retried after at least the 2 s asked, not after the 20 ms backoff.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it('counts each provider call in /metrics by outcome, and logs a submission it will not send again by provider name, never its key', async () => {
    const lines: string[] = [];
    t = await openai({}, { env: {}, metricsToken: 'metrics-secret-1', log: lines });
    oai.fail500(1);
    await ended(t, await create(t));
    await ended(t, await create(t));
    const scrape = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-secret-1' } });
    expect(scrape.statusCode).toBe(200);
    expect(scrape.body).toMatch(/mediagen_provider_requests_total\{provider="up",type="openai",method="POST",outcome="unavailable"\} 1/);
    expect(scrape.body).toMatch(/mediagen_provider_requests_total\{provider="up",type="openai",method="POST",outcome="ok"\} 1/);
    expect(scrape.body).toMatch(/mediagen_provider_request_duration_seconds_count\{provider="up",method="POST"\} 2/);
    const notAgain = lines.map((l) => JSON.parse(l) as Json).find((l) => l.msg === 'the upstream may have taken the submission; not sending it again');
    expect(notAgain).toMatchObject({ level: 'warn', provider: 'up', type: 'openai', status: 500, phase: 'submit' });
    expect(lines.join('\n')).not.toContain(oai.apiKey);
  });

  it("fails upstream_rejected with the provider's words, cleaned of the key", async () => {
    t = await openai();
    oai.reject(`Your request was rejected as a result of our safety system (key ${oai.apiKey})`);
    const id = await create(t);
    const job = await ended(t, id);
    expect(job.error).toMatchObject({ code: 'upstream_rejected' });
    const message = (job.error as { message: string }).message;
    expect(message).toContain('the provider refused the request: 400: Your request was rejected as a result of our safety system');
    expect(message).not.toContain(oai.apiKey);
  });

  it('fails upstream_malformed for an answer that is not JSON, and for one that names no file', async () => {
    t = await openai();
    oai.failMalformed(1);
    const first = await ended(t, await create(t));
    expect(first.error).toMatchObject({ code: 'upstream_malformed' });
    oai.answerNext({ created: 1, data: [] });
    const second = await ended(t, await create(t));
    expect(second.error).toMatchObject({ code: 'upstream_malformed' });
  });

  it('refuses an output URL on a private address, storing no file', async () => {
    krea.statuses = ['completed'];
    krea.outputUrls = [`http://127.0.0.2:${new URL(krea.url).port}/files/1.png`];
    try {
      t = await kreaApp();
      const id = await create(t);
      const job = await ended(t, id);
      expect(job.error).toMatchObject({ code: 'upstream_malformed' });
      expect((job.error as { message: string }).message).toMatch(/refused: 127\.0\.0\.2 is/);
      expect(job.result ?? null).toBeNull();
    } finally {
      krea.outputUrls = undefined;
    }
  });

  it('refuses an output larger than worker_output_max_bytes', async () => {
    krea.statuses = ['completed'];
    t = await kreaApp({ outputMax: 16 });
    const job = await ended(t, await create(t));
    expect(job.error).toMatchObject({ code: 'upstream_malformed' });
    expect((job.error as { message: string }).message).toContain('larger than');
  });
});
