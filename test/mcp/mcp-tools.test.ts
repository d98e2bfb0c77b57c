import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createTestApp, del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { A2_MEDIUM, B1, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

/**
 * Every tool against the real server, over the SDK's client: each answers what its HTTP route
 * answers (the same use case), and refuses with the HTTP API's message.
 */

type Job = { job_id: string; type: string; status: string; created_at: string };
type Page<T> = { items: T[]; next_cursor: string | null };

describe.each(backends)('MCP tools on $name', (backend) => {
  let t: TestApp;
  let url: URL;
  let client: Client;
  let other: { token: string; client: Client };

  beforeAll(async () => {
    t = await createTestApp({ backend });
    url = await listen(t);
    client = await connect(url, t.token);
    const ws = await t.newWorkspace('other');
    other = { token: ws.token, client: await connect(url, ws.token) };
  });
  afterAll(async () => {
    await client.close();
    await other.client.close();
    await t.close();
  });

  const make = (model = B1, input: Json = MINIMAL[B1]!) => call<Job>(client, 'generate', { model, input });

  describe('models', () => {
    it('list_models lists what GET /models lists, in its order, with prices in words', async () => {
      const http = (await get(t, '/models')).json<{ items: { id: string; kind: string; available: boolean }[] }>().items;
      const { items } = await call<{ items: { id: string; kind: string; available: boolean; price?: string }[] }>(client, 'list_models');
      expect(items.map((m) => [m.id, m.kind, m.available])).toEqual(http.map((m) => [m.id, m.kind, m.available]));
      expect(items.find((m) => m.id === A2_MEDIUM)!.price).toBe(
        '$0.03 text to image, $0.035 style references, $0.04 moodboards; per request: moodboards when moodboards is non-empty, ' +
          'else style_references when image_style_references is non-empty, else text_to_image',
      );
      expect(items.find((m) => m.id === 'video/vendor-f/model-f')!.price).toBe('$0.4515 per request');
    });

    it('list_models filters by kind', async () => {
      const { items } = await call<{ items: { kind: string }[] }>(client, 'list_models', { kind: 'audio' });
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((m) => m.kind === 'audio')).toBe(true);
    });

    it("get_model_schema gives the request schema GET /models/{id} gives, and GET's refusal for an unknown model", async () => {
      const http = (await get(t, `/models/${encodeURIComponent(A2_MEDIUM)}`)).json<{ request_schema: Json }>();
      expect(await call(client, 'get_model_schema', { model: A2_MEDIUM })).toEqual({ id: A2_MEDIUM, available: true, request_schema: http.request_schema });
      const missing = errorOf(await get(t, `/models/${encodeURIComponent('image/nope')}`), 404);
      expect((await callError(client, 'get_model_schema', { model: 'image/nope' })).message).toBe(missing);
    });

    it('quote_price answers what POST /models/{id}/quote answers, refuses as it refuses, and creates nothing', async () => {
      const quote = (model: string, payload: Json) =>
        t.app.inject({ method: 'POST', url: `/models/${encodeURIComponent(model)}/quote`, headers: { authorization: `Bearer ${t.token}` }, payload });
      const before = (await get(t, '/jobs')).json<Page<Job>>().items.length;
      const styled = { ...MINIMAL[A2_MEDIUM], image_style_references: [{ url: 'https://assets.example/ref.png' }] };
      for (const input of [MINIMAL[A2_MEDIUM]!, styled]) {
        const http = (await quote(A2_MEDIUM, input)).json();
        expect(await call(client, 'quote_price', { model: A2_MEDIUM, input })).toEqual(http);
      }
      expect((await call<{ price_micro_usd: number }>(client, 'quote_price', { model: A2_MEDIUM, input: styled })).price_micro_usd).toBe(35_000);
      const bad = { ...MINIMAL[A2_MEDIUM], aspect_ratio: '7:3' };
      expect((await callError(client, 'quote_price', { model: A2_MEDIUM, input: bad })).message).toBe(errorOf(await quote(A2_MEDIUM, bad), 400));
      expect((await callError(client, 'quote_price', { model: 'image/nope', input: {} })).message).toBe(errorOf(await quote('image/nope', {}), 404));
      expect((await get(t, '/jobs')).json<Page<Job>>().items.length).toBe(before);
    });
  });

  describe('generate', () => {
    it('creates the job POST /generate would, which GET /jobs/{id} then shows', async () => {
      const job = await make(A2_MEDIUM, { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' });
      expect(job).toMatchObject({ type: A2_MEDIUM, status: 'queued' });
      expect(job).not.toHaveProperty('result');
      expect((await get(t, `/jobs/${job.job_id}`)).json()).toEqual(job);
      // Defaults filled in and stored, as for an HTTP request.
      expect((await t.store.jobs.getJob((await t.services.identity.authenticate(`Bearer ${t.token}`)).apiUserId, job.job_id))!.request).toMatchObject({ prompt: 'a red fox' });
    });

    it.each([
      ['a missing field', A2_MEDIUM, { prompt: 'a fox' }],
      ['an unknown field', B1, { prompt: 'a bird', surprise: 1 }],
      ['a wrong type', B1, { prompt: 7 }],
      ['a loopback input URL', A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], image_url: 'http://127.0.0.1/x.png' }],
    ])('refuses %s with the message HTTP gives', async (_what, model, input) => {
      const http = errorOf(await generate(t, model, input), 400);
      expect(await callError(client, 'generate', { model, input })).toEqual({ message: http });
    });

    it('names its own argument where HTTP names a header: webhook_url', async () => {
      const http = errorOf(await generate(t, B1, MINIMAL[B1], { 'x-webhook-url': 'ftp://example.com/hook' }), 400);
      const { message } = await callError(client, 'generate', { model: B1, input: MINIMAL[B1], webhook_url: 'ftp://example.com/hook' });
      expect(message).toBe(http.replace('X-Webhook-URL', 'webhook_url'));
      expect(message).toContain('webhook_url');
    });

    it('refuses style training, which has a tool of its own (as HTTP has no /generate/loraTraining)', async () => {
      expect((await callError(client, 'generate', { model: 'loraTraining', input: { name: 'x', urls: ['https://example.com/a.png'] } })).message).toBe(
        "model 'loraTraining' is not generated here; use the tool that calls /styles/train (train_style)",
      );
    });

    it('refuses an unknown model by name', async () => {
      expect((await callError(client, 'generate', { model: 'image/nope', input: {} })).message).toBe("model 'image/nope' not found");
    });

    it('replays the first job for a repeated idempotency key', async () => {
      const first = await call<Job>(client, 'generate', { model: B1, input: MINIMAL[B1], idempotency_key: 'mcp-retry-1' });
      const again = await call<Job>(client, 'generate', { model: B1, input: MINIMAL[B1], idempotency_key: 'mcp-retry-1' });
      expect(again.job_id).toBe(first.job_id);
      expect((await callError(client, 'generate', { model: B1, input: MINIMAL[B1], idempotency_key: '' })).message).toMatch(/idempotency_key/);
    });
  });

  describe('jobs', () => {
    it('get_job shows what GET /jobs/{id} shows', async () => {
      const job = await make();
      expect(await call(client, 'get_job', { job_id: job.job_id })).toEqual((await get(t, `/jobs/${job.job_id}`)).json());
    });

    it('list_jobs pages and filters as GET /jobs does', async () => {
      for (let i = 0; i < 3; i++) await make();
      const first = await call<Page<Job>>(client, 'list_jobs', { limit: 2 });
      expect(first).toEqual((await get(t, '/jobs?limit=2')).json());
      const second = await call<Page<Job>>(client, 'list_jobs', { limit: 2, cursor: first.next_cursor });
      expect(second).toEqual((await get(t, `/jobs?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`)).json());
      const filtered = await call<Page<Job>>(client, 'list_jobs', { types: [B1], status: 'queued' });
      expect(filtered).toEqual((await get(t, `/jobs?types=${encodeURIComponent(B1)}&status=queued`)).json());
      expect(filtered.items.length).toBeGreaterThan(0);
      expect((await callError(client, 'list_jobs', { types: ['image/nope'] })).message).toMatch(/unknown type 'image\/nope'/);
    });

    it('delete_job deletes as DELETE /jobs/{id} does, and the job is then not found with the HTTP message', async () => {
      const job = await make();
      expect(await call(client, 'delete_job', { job_id: job.job_id })).toEqual({ job_id: job.job_id, deleted: true });
      const http = errorOf(await get(t, `/jobs/${job.job_id}`), 404);
      expect((await callError(client, 'get_job', { job_id: job.job_id })).message).toBe(http);
      expect((await callError(client, 'delete_job', { job_id: job.job_id })).message).toBe(errorOf(await del(t, `/jobs/${job.job_id}`), 404));
    });
  });

  describe('workspaces', () => {
    it("a second workspace sees none of the first's jobs", async () => {
      const job = await make();
      const listed = await call<Page<Job>>(other.client, 'list_jobs');
      expect(listed).toEqual({ items: [], next_cursor: null });
      const http = errorOf(await get(t, `/jobs/${job.job_id}`, other.token), 404);
      expect((await callError(other.client, 'get_job', { job_id: job.job_id })).message).toBe(http);
      expect((await callError(other.client, 'delete_job', { job_id: job.job_id })).message).toBe(http);
      await expect(other.client.readResource({ uri: `mediagen://jobs/${job.job_id}` })).rejects.toThrow(/resource not found/);
      // Still there for its owner.
      expect((await call<Job>(client, 'get_job', { job_id: job.job_id })).job_id).toBe(job.job_id);
    });

    it('get_usage answers what GET /usage answers', async () => {
      expect(await call(client, 'get_usage', { limit: 10 })).toEqual((await get(t, '/usage?limit=10')).json());
      const http = errorOf(await get(t, '/usage?start=2026-02-01T00:00:00Z&end=2026-01-01T00:00:00Z'), 400);
      expect((await callError(client, 'get_usage', { start: '2026-02-01T00:00:00Z', end: '2026-01-01T00:00:00Z' })).message).toBe(http);
    });
  });

  describe('refusals with a status beside the message', () => {
    it('402: a workspace without balance gets the HTTP message and its explanation', async () => {
      const ws = await t.services.identity.createWorkspace('broke', 'owner@broke.test');
      const { secret } = await t.services.identity.createToken(ws.id, 'test', 'owner@broke.test');
      const http = await generate(t, B1, MINIMAL[B1], {}, secret);
      const body = http.json<{ error: string; message: string }>();
      expect(http.statusCode).toBe(402);
      const broke = await connect(url, secret);
      expect(await callError(broke, 'generate', { model: B1, input: MINIMAL[B1] })).toEqual({
        message: body.error,
        details: { code: 'insufficient_balance', message: body.message },
      });
      await broke.close();
    });

    it('429: a full workspace gets the HTTP message and the wait', async () => {
      const ws = await t.newWorkspace('tight');
      await t.services.identity.setWorkspace(ws.workspaceId, { maxConcurrentJobs: 1, maxBackloggedJobs: 0 });
      const tight = await connect(url, ws.token);
      await call(tight, 'generate', { model: B1, input: MINIMAL[B1] });
      const http = await generate(t, B1, MINIMAL[B1], {}, ws.token);
      expect(http.statusCode).toBe(429);
      expect(await callError(tight, 'generate', { model: B1, input: MINIMAL[B1] })).toEqual({
        message: http.json<{ error: string }>().error,
        details: { code: 'too_many_jobs', retry_after_seconds: Number(http.headers['retry-after']) },
      });
      await tight.close();
    });
  });
});
