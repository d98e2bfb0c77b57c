import { afterEach, describe, expect, it } from 'vitest';
import { Mediagen, MediagenError, MediagenNetworkError } from '../../packages/client/src/index.js';
import { drop, job, sendJson, startStub } from './stub.js';
import type { Stub } from './stub.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K' } as const;
const created = job('queued', { completed_at: null, result: null });

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const clientOf = (s: Stub, retry?: { retries?: number; maxDelayMs?: number }) => new Mediagen({ baseUrl: s.url, token: 'mg_test', ...(retry ? { retry } : {}) });

describe('client retries (a local stub server)', () => {
  it('retries a 429 after its Retry-After, sending the same Idempotency-Key, and returns the job as GET shows it', async () => {
    stub = await startStub((_req, res, n) => (n === 0 ? sendJson(res, 429, { error: 'too many jobs' }, { 'retry-after': '1' }) : sendJson(res, 200, created)));
    const got = await clientOf(stub).generate(MODEL, BODY);
    expect(got).toEqual(job('queued'));
    const [first, second] = stub.seen;
    expect(stub.seen).toHaveLength(2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
    expect(first!.headers['idempotency-key']).toMatch(/^mgc-[0-9a-f]{32}$/);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(first!.headers.authorization).toBe('Bearer mg_test');
    expect(JSON.parse(second!.body)).toEqual(BODY);
  });

  it('retries a 503 of a GET, as an HTTP date Retry-After too', async () => {
    stub = await startStub((_req, res, n) =>
      n === 0 ? sendJson(res, 503, { error: 'shutting down' }, { 'retry-after': new Date(Date.now() - 5000).toUTCString() }) : sendJson(res, 200, job('processing')),
    );
    expect((await clientOf(stub).jobs.get('0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69')).status).toBe('processing');
    expect(stub.seen).toHaveLength(2);
  });

  it('does not sleep through a Retry-After longer than maxDelayMs: the error carries it', async () => {
    stub = await startStub((_req, res) => sendJson(res, 429, { error: 'too many jobs' }, { 'retry-after': '3600', 'x-request-id': 'req-1' }));
    const err = await clientOf(stub).generate(MODEL, BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect(err).toMatchObject({ status: 429, error: 'too many jobs', message: 'too many jobs', retryAfter: 3600, requestId: 'req-1' });
    expect(stub.seen).toHaveLength(1);
  });

  it('gives up after `retries` retries', async () => {
    stub = await startStub((_req, res) => sendJson(res, 503, { error: 'disk full' }, { 'retry-after': '0' }));
    await expect(clientOf(stub, { retries: 2 }).jobs.list()).rejects.toMatchObject({ status: 503, error: 'disk full', retryAfter: 0 });
    expect(stub.seen).toHaveLength(3);
  });

  it('repeats a POST after a network error when it generated the Idempotency-Key itself', async () => {
    stub = await startStub((_req, res, n) => (n === 0 ? drop(res) : sendJson(res, 200, created)));
    expect((await clientOf(stub).generate(MODEL, BODY)).job_id).toBe(created.job_id);
    expect(stub.seen).toHaveLength(2);
    expect(stub.seen[1]!.headers['idempotency-key']).toBe(stub.seen[0]!.headers['idempotency-key']);
  });

  it("does not repeat a POST with the caller's own key, nor a DELETE, after a network error; repeats a GET", async () => {
    stub = await startStub((req, res, n) => (n < 3 ? drop(res) : sendJson(res, 200, job('queued'))));
    const client = clientOf(stub);
    await expect(client.generate(MODEL, BODY, { idempotencyKey: 'mine-1' })).rejects.toBeInstanceOf(MediagenNetworkError);
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0]!.headers['idempotency-key']).toBe('mine-1');
    await expect(client.jobs.delete('x')).rejects.toThrow(/cannot reach the mediagen server at http:\/\/127\.0\.0\.1:\d+/);
    expect(stub.seen).toHaveLength(2);
    expect((await client.jobs.get('x')).status).toBe('queued');
    expect(stub.seen.map((s) => s.method)).toEqual(['POST', 'DELETE', 'GET', 'GET']);
  });

  it('retries a 409 "still in flight" of its keyed POST after the Retry-After, and no other 409', async () => {
    stub = await startStub((req, res, n) => {
      if (n === 0) return sendJson(res, 409, { error: 'a request with this Idempotency-Key is still being processed' }, { 'retry-after': '0' });
      if (req.url.endsWith('/cancel')) return sendJson(res, 409, { error: 'the job has ended', status: 'completed' });
      sendJson(res, 200, created);
    });
    const client = clientOf(stub);
    expect((await client.generate(MODEL, BODY)).status).toBe('queued');
    expect(stub.seen).toHaveLength(2);
    const err = await client.jobs.cancel('x').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409, jobStatus: 'completed' });
    expect(stub.seen).toHaveLength(3);
  });

  it('retry: false sends once', async () => {
    stub = await startStub((_req, res) => sendJson(res, 503, { error: 'busy' }, { 'retry-after': '0' }));
    await expect(new Mediagen({ baseUrl: stub.url, retry: false }).models.list()).rejects.toMatchObject({ status: 503 });
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0]!.headers.authorization).toBeUndefined();
  });

  it('retries styles.train and nodeApps.execute as generate, with one key; execute returns the one job of its array', async () => {
    stub = await startStub((req, res, n) => {
      if (n % 2 === 0) return sendJson(res, 503, { error: 'busy' }, { 'retry-after': '0' });
      sendJson(res, 200, req.url.endsWith('/execute') ? [created] : created);
    });
    const client = clientOf(stub);
    expect(await client.styles.train({ name: 'Ink', urls: ['https://example.com/a.png'] })).toEqual(job('queued'));
    expect(await client.nodeApps.execute('v 1', { prompt: 'a fox' }, { idempotencyKey: 'mine' })).toEqual(job('queued'));
    expect(stub.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /styles/train', 'POST /styles/train', 'POST /node-apps/v%201/execute', 'POST /node-apps/v%201/execute']);
    expect(stub.seen[1]!.headers['idempotency-key']).toBe(stub.seen[0]!.headers['idempotency-key']);
    expect(stub.seen[0]!.headers['idempotency-key']).toMatch(/^mgc-/);
    expect(stub.seen.slice(2).map((r) => r.headers['idempotency-key'])).toEqual(['mine', 'mine']);
    expect(JSON.parse(stub.seen[3]!.body)).toEqual({ prompt: 'a fox' });
  });
});
