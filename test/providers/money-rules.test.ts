import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readProviders } from '../../src/config/provider-settings.js';
import type { Log } from '../../src/lib/log.js';
import { createTestApp, generate, jobEnd } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeKrea } from './fakes/fake-krea.js';
import type { FakeKrea } from './fakes/fake-krea.js';
import { startFakeOpenAi } from './fakes/fake-openai.js';
import type { FakeOpenAi } from './fakes/fake-openai.js';
import { startFakeReplicate } from './fakes/fake-replicate.js';
import type { FakeReplicate } from './fakes/fake-replicate.js';

/**
 * The money rules (docs/providers.md): what is sent to a provider again, and when, in whole runs
 * on a real store, against fakes of Replicate and OpenAI over loopback whose outputs come from a
 * file host on another address (so through the address guard).
 */

const MODEL = 'image/vendor-b/model-b-1';

interface Line {
  readonly level: string;
  readonly msg: string;
  readonly [k: string]: unknown;
}

function recordingLog(lines: Line[]): Log {
  const put = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, ...obj });
  return { info: put('info'), warn: put('warn'), error: put('error') };
}

it("OpenAI's request timeout defaults to its SDK's 600 s (a slow gpt-image run is not cut off and paid again); other types keep 120 s", () => {
  const [openai, replicate] = readProviders({ o: { type: 'openai', api_key_env: 'K' }, r: { type: 'replicate', api_key_env: 'K' } }, 'test.json', { K: 'key-1234' });
  expect(openai!.requestTimeoutMs).toBe(600_000);
  expect(replicate!.requestTimeoutMs).toBe(120_000);
});

describe.each(backends)('money rules: $name', { timeout: 60_000 }, (backend) => {
  let rep: FakeReplicate;
  let oai: FakeOpenAi;
  let krea: FakeKrea;
  let t: TestApp | undefined;
  let lines: Line[];
  beforeAll(async () => {
    rep = await startFakeReplicate();
    oai = await startFakeOpenAi();
    krea = await startFakeKrea();
  });
  afterAll(async () => {
    await rep?.close();
    await oai?.close();
    await krea?.close();
  });
  afterEach(async () => {
    oai.release();
    oai.fileHost.release();
    rep.fileHost.release();
    await t?.close();
    t = undefined;
  });

  async function appFor(provider: Json, upstream: Json, env: Record<string, string>): Promise<TestApp> {
    lines = [];
    return createTestApp({
      realClock: true,
      backend,
      // The outputs' file host is another loopback address: the address guard lets it through.
      allowPrivateUrls: true,
      modelEngines: { [MODEL]: 'provider:up' },
      providers: { providers: { up: { poll_interval_ms: 20, ...provider } }, upstream: { [MODEL]: upstream }, env },
      worker: { pollMs: 50, log: recordingLog(lines) },
    });
  }
  const replicate = (extra: Json = {}) => appFor({ type: 'replicate', base_url: rep.url, api_key_env: 'REP', ...extra }, { model: 'owner/model' }, { REP: rep.token });
  const openai = (extra: Json = {}, upstream: Json = { model: 'gpt-image-1' }, key = oai.apiKey) =>
    appFor({ type: 'openai', base_url: oai.url, api_key_env: 'OAI', ...extra }, upstream, { OAI: key });

  const create = async (app: TestApp) => {
    const res = await generate(app, MODEL, { prompt: 'a red fox', width: 512, height: 512 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };
  const posts = () => rep.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/predictions')).length;
  const billing = async (id: string) => (await t!.store.billing.entriesOfJob(id)).map((e) => e.kind).sort();

  it('sends a submission answered 500 once: one POST at Replicate, the job failed upstream_unavailable, unbilled', async () => {
    t = await replicate();
    const before = posts();
    rep.fail500(1);
    const id = await create(t);
    const job = await jobEnd(t, id, 20_000);
    expect(job.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(posts() - before).toBe(1);
    expect(await billing(id)).toEqual(['hold', 'release']);
  });

  it('sends a submission that timed out once: one call at OpenAI, the job failed upstream_unavailable, unbilled', async () => {
    t = await openai({ request_timeout_ms: 1000 });
    oai.hold();
    const before = oai.submissions;
    const id = await create(t);
    const job = await jobEnd(t, id, 20_000);
    expect(job.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(oai.submissions - before).toBe(1);
    expect(await billing(id)).toEqual(['hold', 'release']);
  });

  it('sends a submission answered 429 again, and completes with one prediction made', async () => {
    t = await replicate();
    const [before, made] = [posts(), rep.submissions()];
    rep.fail429(1, 0);
    const job = await jobEnd(t, await create(t), 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(posts() - before).toBe(2);
    expect(rep.submissions() - made).toBe(1);
  });

  it('sends a submission answered 500 again to a krea upstream, which deduplicates it by the job id: one job made there', async () => {
    t = await appFor({ type: 'krea', base_url: krea.url, api_key_env: 'KREA' }, {}, { KREA: krea.token });
    const [calls, made] = [krea.requests.length, krea.submissions];
    krea.fail500(1);
    const id = await create(t);
    const job = await jobEnd(t, id, 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = krea.requests.slice(calls).filter((r) => r.method === 'POST');
    expect(sent.map((r) => r.headers['idempotency-key'])).toEqual([id, id]);
    expect(krea.submissions - made).toBe(1);
  });

  it('retries an output download its file host answered 503 twice, and completes', async () => {
    t = await replicate();
    rep.fileHost.fail(2, 503);
    const seen = rep.fileHost.requests.length;
    const id = await create(t);
    const job = await jobEnd(t, id, 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(rep.fileHost.requests.length - seen).toBe(3);
    expect(await billing(id)).toEqual(['charge', 'hold']);
  });

  it('waits as long as retry-after-ms asks before sending a 429ed submission again', async () => {
    t = await openai();
    oai.answerError(429, { message: 'Rate limit reached for images per minute.', type: 'requests', code: 'rate_limit_exceeded' }, { 'retry-after-ms': '1500' });
    const started = Date.now();
    const job = await jobEnd(t, await create(t), 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('does not send again a submission answered x-should-retry: false', async () => {
    t = await openai();
    const before = oai.submissions;
    oai.answerError(429, { message: 'Rate limit reached for images per minute.', type: 'requests', code: 'rate_limit_exceeded' }, { 'x-should-retry': 'false' });
    const job = await jobEnd(t, await create(t), 20_000);
    expect(job.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(oai.submissions - before).toBe(1);
  });

  it('fails a 429 insufficient_quota as upstream_rejected, without waiting or sending it again', async () => {
    t = await openai();
    const before = oai.submissions;
    oai.answerError(429, { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' });
    const job = await jobEnd(t, await create(t), 20_000);
    expect(job.error).toMatchObject({ code: 'upstream_rejected' });
    expect((job.error as { message: string }).message).toContain('exceeded your current quota');
    expect(oai.submissions - before).toBe(1);
  });

  it('logs a 401 from the provider at warn with its name and the status, never the key', async () => {
    const wrong = 'sk-wrong-key-0123456789abcdef';
    t = await openai({}, { model: 'gpt-image-1' }, wrong);
    const job = await jobEnd(t, await create(t), 20_000);
    expect(job.error).toMatchObject({ code: 'upstream_rejected' });
    expect(lines.find((l) => l.status === 401)).toMatchObject({ level: 'warn', provider: 'up', type: 'openai', status: 401 });
    expect(JSON.stringify(lines)).not.toContain(wrong);
    expect(JSON.stringify(job)).not.toContain(wrong);
  });

  it('calls a synchronous provider again, once, when a restart cut its call off, saying so at warn; the job completes', async () => {
    t = await openai();
    const before = oai.submissions;
    oai.hold();
    const id = await create(t);
    await waitFor(async () => oai.submissions > before, 'the call to reach OpenAI');
    await t.worker!.stop(0);
    oai.release();
    await t.startWorker({ pollMs: 50 });
    const job = await jobEnd(t, id, 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(oai.submissions - before).toBe(2);
    expect(lines.find((l) => l.msg.startsWith('a synchronous provider call was cut off by a restart'))).toMatchObject({ level: 'warn', provider: 'up', was: 'submitting' });
    expect(await billing(id)).toEqual(['charge', 'hold']);
  });

  it('takes the kept output URLs of an answered synchronous call after a restart, without calling the provider again', async () => {
    t = await openai({}, { model: 'dall-e-2', input: { prompt: '{{prompt}}', response_format: 'url' } });
    const before = oai.submissions;
    const seen = oai.fileHost.requests.length;
    oai.fileHost.hold();
    const id = await create(t);
    await waitFor(async () => oai.fileHost.requests.length > seen, 'the download to start');
    await t.worker!.stop(0);
    oai.fileHost.release();
    await t.startWorker({ pollMs: 50 });
    const job = await jobEnd(t, id, 20_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(oai.submissions - before).toBe(1);
  });
});
