import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { KREA_DEFAULT_OUTPUTS, kreaAdapter, kreaPath } from '../../src/engines/providers/krea-adapter.js';
import { createProviderHttp } from '../../src/engines/providers/provider-http.js';
import { UpstreamError } from '../../src/engines/upstream/upstream-error.js';
import type { ProviderAdapter, UpstreamHandle, UpstreamStatus } from '../../src/engines/providers/provider-port.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeKrea } from './fakes/fake-krea.js';
import type { FakeKrea } from './fakes/fake-krea.js';

/**
 * The krea adapter: against a real mediagen (the API it is written for: this server's own routes,
 * on loopback, with its local engine) and, for what a real server does not do on cue (every status,
 * 500, malformed answers), against a fake written from the spec.
 */
function adapterAt(baseUrl: string, token: string): ProviderAdapter {
  const settings = { name: 'up', type: 'krea' as const, baseUrl, apiKeyEnv: 'UPSTREAM_TOKEN', apiKey: () => token, requestTimeoutMs: 10_000, maxAttempts: 5, pollIntervalMs: 100, inlineMaxBytes: 1024 };
  return kreaAdapter(settings, createProviderHttp({ type: 'krea', baseUrl, apiKey: () => token, timeoutMs: settings.requestTimeoutMs, clock: systemClock }));
}

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

const MODEL_B = 'image/vendor-b/model-b-1';
const newJobId = () => crypto.randomUUID();

describe('krea adapter against a real mediagen', { timeout: 60_000 }, () => {
  let up: TestApp;
  let idle: TestApp;
  let upUrl = '';
  let idleUrl = '';

  beforeAll(async () => {
    up = await createTestApp({ worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), concurrency: 2, pollMs: 100 } });
    upUrl = await up.app.listen({ port: 0, host: '127.0.0.1' });
    // No worker: its jobs stay queued (to be cancelled); one job fills the workspace (the 429).
    idle = await createTestApp({ limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 } });
    idleUrl = await idle.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await up?.close();
    await idle?.close();
  });

  const poll = (a: ProviderAdapter, handle: UpstreamHandle, seen: string[] = []) =>
    waitFor(
      async () => {
        const s = await a.status(handle);
        if (seen.at(-1) !== s.raw) seen.push(s.raw);
        return ['succeeded', 'failed', 'cancelled'].includes(s.state) ? s : undefined;
      },
      'the upstream job to end',
      30_000,
    );

  it('submits a built-in model, polls it to completed, and reads the files and the cost from the answer', async () => {
    const a = adapterAt(upUrl, up.token);
    expect(a.synchronous).toBe(false);
    expect(a.defaultOutputs).toEqual(KREA_DEFAULT_OUTPUTS);
    const { handle, status } = await a.submit({ model: `/generate/${MODEL_B}`, input: { prompt: 'a fox', width: 512, height: 512 }, jobId: newJobId() });
    expect(handle.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(status).toEqual({ state: 'queued', raw: 'queued' });
    const seen: string[] = [];
    const done = await poll(a, handle, seen);
    expect(done.state, JSON.stringify(done)).toBe('succeeded');
    if (done.state !== 'succeeded') return;
    const job = done.output as { job_id: string; status: string; result: { urls: string[] } };
    expect(job).toMatchObject({ job_id: handle.id, status: 'completed', type: MODEL_B });
    expect(job.result.urls).toHaveLength(1);
    // The file is there (served at the upstream's public URL; read here through its app).
    const file = await up.app.inject({ method: 'GET', url: new URL(job.result.urls[0]!).pathname });
    expect(file.statusCode).toBe(200);
    expect((await sharp(file.rawPayload).metadata()).width).toBe(512);
    // model-b-1 standard: $0.0404, held and charged upstream; the owner's token reads it from the job details.
    expect(done.usage).toEqual({ cost_usd: '0.040400', price_usd: '0.040400' });
    expect(seen.at(-1)).toBe('completed');
  });

  it('a bare model path is posted under /generate/, and a data: URI image input is taken', async () => {
    const a = adapterAt(upUrl, up.token);
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#c02020' } }).png().toBuffer();
    const image_url = `data:image/png;base64,${png.toString('base64')}`;
    const { handle } = await a.submit({ model: 'image/vendor-a/model-a-2/medium', input: { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K', image_url }, jobId: newJobId() });
    expect((await poll(a, handle)).state).toBe('succeeded');
  });

  it('the same Idempotency-Key (our job id) gets the same upstream job; another gets a new one', async () => {
    const a = adapterAt(upUrl, up.token);
    const jobId = newJobId();
    const input = { prompt: 'the same fox' };
    const first = await a.submit({ model: MODEL_B, input, jobId });
    const again = await a.submit({ model: MODEL_B, input, jobId });
    const other = await a.submit({ model: MODEL_B, input, jobId: newJobId() });
    expect(again.handle.id).toBe(first.handle.id);
    expect(other.handle.id).not.toBe(first.handle.id);
    await poll(a, first.handle);
    await poll(a, other.handle);
  });

  it('a job the upstream fails is failed, with its message and code', async () => {
    const a = adapterAt(upUrl, up.token);
    // Valid base64, but not an image: the upstream's worker fails the job with input_invalid.
    const input = { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K', image_url: 'data:image/png;base64,AAAAAAAA' };
    const { handle } = await a.submit({ model: 'image/vendor-a/model-a-2/medium', input, jobId: newJobId() });
    const done = await poll(a, handle);
    expect(done).toMatchObject({ state: 'failed', raw: 'failed' });
    if (done.state === 'failed') expect(done.message).toMatch(/image_url.*\(input_invalid\)$/);
  });

  it('a bad body is rejected with the upstream\'s message, which never carries the token', async () => {
    const a = adapterAt(upUrl, up.token);
    const err = await failure(a.submit({ model: MODEL_B, input: { width: 512 }, jobId: newJobId() }));
    expect(err).toMatchObject({ kind: 'rejected', status: 400 });
    expect(err.message).toContain("missing required property 'prompt'");
    expect(err.message).not.toContain(up.token);
  });

  it('a wrong token is rejected (401)', async () => {
    const err = await failure(adapterAt(upUrl, 'mg_wrong_token_123456789').submit({ model: MODEL_B, input: { prompt: 'a' }, jobId: newJobId() }));
    expect(err).toMatchObject({ kind: 'rejected', status: 401 });
  });

  it('cancel DELETEs the upstream job (then gone: status failed not_found; a second cancel is no error); a full upstream is 429 unavailable with Retry-After', async () => {
    const a = adapterAt(idleUrl, idle.token);
    const { handle } = await a.submit({ model: MODEL_B, input: { prompt: 'never run' }, jobId: newJobId() });
    expect(await a.status(handle)).toEqual({ state: 'queued', raw: 'queued' });
    const full = await failure(a.submit({ model: MODEL_B, input: { prompt: 'no room' }, jobId: newJobId() }));
    expect(full).toMatchObject({ kind: 'unavailable', status: 429, retryAfterMs: 5000 });
    await a.cancel(handle);
    const gone = await a.status(handle);
    expect(gone).toMatchObject({ state: 'failed', raw: 'not_found' });
    await expect(a.cancel(handle)).resolves.toBeUndefined();
    // The slot is free again.
    const next = await a.submit({ model: MODEL_B, input: { prompt: 'room now' }, jobId: newJobId() });
    // Cancelled upstream by its own client (POST /jobs/{id}/cancel keeps the record): cancelled.
    const res = await fetch(`${idleUrl}/jobs/${next.handle.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${idle.token}` } });
    expect(res.status).toBe(200);
    expect(await a.status(next.handle)).toEqual({ state: 'cancelled', raw: 'cancelled' });
    await a.cancel(next.handle);
  });
});

describe('krea adapter against a fake upstream', () => {
  let fake: FakeKrea;
  beforeAll(async () => {
    fake = await startFakeKrea({ costUsd: '0.12' });
  });
  afterAll(() => fake.close());
  const a = () => adapterAt(fake.url, fake.token);

  it('maps every status of the spec, in order, and sends the Bearer token and the Idempotency-Key', async () => {
    fake.statuses = ['backlogged', 'queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed'];
    const jobId = newJobId();
    const { handle } = await a().submit({ model: '/generate/video/vendor-f/model-f', input: { prompt: 'p' }, jobId });
    const post = fake.requests.at(-1)!;
    expect(post).toMatchObject({ method: 'POST', path: '/generate/video/vendor-f/model-f', body: { prompt: 'p' } });
    expect(post.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(post.headers['idempotency-key']).toBe(jobId);
    const got: UpstreamStatus[] = [];
    for (let i = 0; i < 7; i++) got.push(await a().status(handle));
    expect(got.map((s) => ({ ...s, output: undefined }))).toEqual([
      { state: 'queued', raw: 'backlogged', output: undefined },
      { state: 'queued', raw: 'queued', output: undefined },
      { state: 'queued', raw: 'scheduled', output: undefined },
      { state: 'running', raw: 'processing', output: undefined },
      { state: 'running', raw: 'sampling', sampling: true, output: undefined },
      { state: 'running', raw: 'intermediate-complete', sampling: true, output: undefined },
      { state: 'succeeded', raw: 'completed', usage: { cost_usd: '0.12' }, output: undefined },
    ]);
    expect(got[6]).toMatchObject({ output: { result: { urls: [`${fake.url}/files/1.png`] } } });
    expect(fake.requests.at(-1)!.path).toBe(`/jobs/${handle.id}`);
  });

  it('failed carries the error message and code; cancelled is cancelled', async () => {
    fake.statuses = ['failed'];
    const { handle } = await a().submit({ model: 'video/vendor-f/model-f', input: { prompt: 'p' }, jobId: newJobId() });
    expect(await a().status(handle)).toEqual({ state: 'failed', raw: 'failed', message: 'the engine failed unexpectedly (engine_failed)' });
    fake.statuses = ['cancelled'];
    expect(await a().status(handle)).toEqual({ state: 'cancelled', raw: 'cancelled' });
    await a().cancel(handle);
    expect(fake.cancels).toContain(handle.id);
  });

  it('429 with Retry-After and 500 are unavailable, on submit and on status', async () => {
    fake.statuses = ['processing'];
    fake.fail429(1, 3);
    expect(await failure(a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() }))).toMatchObject({ kind: 'unavailable', retryAfterMs: 3000 });
    const { handle } = await a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() });
    fake.fail500();
    expect(await failure(a().status(handle))).toMatchObject({ kind: 'unavailable', status: 500 });
    expect(await a().status(handle)).toMatchObject({ state: 'running' });
  });

  it("a job failed at Krea carries its reason from result.error, as Krea's API puts it (string or {code, message})", async () => {
    fake.statuses = ['failed'];
    try {
      const { handle } = await a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() });
      fake.resultError = 'Content moderation: the prompt was flagged';
      expect(await a().status(handle)).toEqual({ state: 'failed', raw: 'failed', message: 'Content moderation: the prompt was flagged' });
      fake.resultError = { code: 'nsfw', message: 'the image was filtered' };
      expect(await a().status(handle)).toEqual({ state: 'failed', raw: 'failed', message: 'the image was filtered (nsfw)' });
    } finally {
      fake.resultError = undefined;
    }
  });

  it('a status this code does not know is still running (as for Replicate and fal), on submit and on status', async () => {
    fake.statuses = ['processing'];
    const { handle } = await a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() });
    fake.answerNext({ job_id: handle.id, status: 'upscaling' });
    expect(await a().status(handle)).toEqual({ state: 'running', raw: 'upscaling' });
    fake.answerNext({ job_id: 'new-job-1', status: 'preparing', created_at: new Date().toISOString(), completed_at: null, result: null });
    expect(await a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() })).toEqual({ handle: { id: 'new-job-1' }, status: { state: 'running', raw: 'preparing' } });
  });

  it('answers that are not JSON, not a job, without a status, of another job or completed without a result are malformed', async () => {
    fake.statuses = ['processing'];
    const { handle } = await a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() });
    fake.failMalformed();
    fake.answerNext({ status: 'queued' });
    fake.answerNext({ job_id: handle.id });
    fake.answerNext({ job_id: 'someone-else', status: 'queued' });
    fake.answerNext({ job_id: handle.id, status: 'completed' });
    for (let i = 0; i < 5; i++) expect((await failure(a().status(handle))).kind).toBe('malformed');
    fake.answerNext({ job_id: 'x' });
    expect((await failure(a().submit({ model: 'x/y', input: { prompt: 'p' }, jobId: newJobId() }))).kind).toBe('malformed');
  });

  it('kreaPath takes a path as given and puts a model path under /generate/', () => {
    expect(kreaPath('/generate/image/vendor-b/model-b-1')).toBe('/generate/image/vendor-b/model-b-1');
    expect(kreaPath('generate/image/vendor-b/model-b-1')).toBe('/generate/image/vendor-b/model-b-1');
    expect(kreaPath('image/vendor-b/model-b-1')).toBe('/generate/image/vendor-b/model-b-1');
    expect(kreaPath('/styles/train')).toBe('/styles/train');
  });
});
