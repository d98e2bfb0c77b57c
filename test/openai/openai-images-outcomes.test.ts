import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { OPENAI_SECTION, native, startLive } from './openai-live.js';
import type { LiveServer } from './openai-live.js';

/**
 * The images routes' answers when their jobs do not complete: a job cancelled while the route
 * waits (500), a wait that runs out (504), a job that fails (500). The official SDK with its
 * default retries: OpenAI's SDKs retry a 5xx unless the answer says `x-should-retry: false`
 * (openai-node's shouldRetry), and a retry would create, run and bill the jobs again.
 */
const B1 = 'image/vendor-b/model-b-1';

/** The routes wait 1 s of the app's manual clock, which the tests move. */
const SECTION = { ...OPENAI_SECTION, wait_seconds: 1 };

type Call = (client: OpenAI, headers?: Record<string, string>) => Promise<OpenAI.ImagesResponse>;

const generate: Call = (client, headers) => client.images.generate({ model: B1, prompt: 'a lighthouse at dusk', size: '512x512' }, { headers });
const edit: Call = async (client, headers) => {
  const input = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#3a6' } }).png().toBuffer();
  return client.images.edit({ model: 'gpt-image-1', prompt: 'make it blue', image: await toFile(input, 'in.png', { type: 'image/png' }) }, { headers });
};

// No worker runs until the last test starts one, so the jobs stay queued; the wait is on the app's manual clock.
describe.each(backends)('the images routes when their jobs are cancelled or outwaited, on $name', { timeout: 60_000 }, (backend) => {
  let t: TestApp;
  let base: string;
  /** Every request the SDK sends: a retry would show here. */
  let sent: string[];
  let client: OpenAI;

  beforeAll(async () => {
    t = await createTestApp({ backend, openai: SECTION, engineLatencyMs: 0 });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const counting: typeof fetch = (input, init) => {
      sent.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    };
    // The SDK's own defaults (2 retries), as an application runs it.
    client = new OpenAI({ apiKey: t.token, baseURL: `${base}/v1`, fetch: counting });
  });
  afterAll(async () => {
    await t?.close();
  });

  const jobs = async () => {
    const res = await fetch(`${base}/jobs?limit=100`, { headers: { authorization: `Bearer ${t.token}` } });
    return ((await res.json()) as { items: { job_id: string; status: string }[] }).items;
  };
  const job = async (id: string) => (await fetch(`${base}/jobs/${id}`, { headers: { authorization: `Bearer ${t.token}` } })).json() as Promise<{ status: string }>;

  /** Starts `call`, and answers once its job exists (the route is then waiting, or about to). */
  async function inFlight(call: Call, headers?: Record<string, string>): Promise<{ answer: Promise<unknown>; jobId: string }> {
    sent = [];
    const before = new Set((await jobs()).map((j) => j.job_id));
    const answer = call(client, headers).then(
      () => {
        throw new Error('the call succeeded');
      },
      (err: unknown) => err,
    );
    const created = await waitFor(async () => (await jobs()).find((j) => !before.has(j.job_id)), 'the job of the request');
    return { answer, jobId: created.job_id };
  }

  function expectNotRetried(err: unknown, status: number, code: string): InstanceType<typeof OpenAI.APIError> {
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(status);
    expect(e.error).toEqual({ message: expect.any(String), type: 'server_error', param: null, code });
    expect(e.headers?.get('x-should-retry')).toBe('false');
    expect(sent.filter((s) => s.startsWith('POST'))).toHaveLength(1);
    return e;
  }

  /** The requests answered 504 above, by route: their jobs go on as native jobs. */
  const timedOut: { route: string; call: Call; headers: Record<string, string>; jobId: string }[] = [];

  /** Moves the manual clock a second at a time until the route, past its wait, answers. */
  async function outwait(answer: Promise<unknown>): Promise<unknown> {
    let settled = false;
    void answer.finally(() => (settled = true));
    await waitFor(async () => {
      t.clock.advance(1000);
      return settled;
    }, 'the route to stop waiting');
    return answer;
  }

  for (const [route, call] of [['generations', generate], ['edits', edit]] as const) {
    it(`POST /v1/images/${route}: a job cancelled during the wait is a 500 'cancelled' the SDK does not retry; nothing is charged`, async () => {
      const { answer, jobId } = await inFlight(call);
      const cancel = await fetch(`${base}/jobs/${jobId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${t.token}` } });
      expect(cancel.status).toBe(200);
      const e = expectNotRetried(await answer, 500, 'cancelled');
      expect(e.message).toContain(jobId);
      expect((await jobs()).filter((j) => j.job_id === jobId)).toEqual([expect.objectContaining({ status: 'cancelled' })]);
      const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((x) => x.jobId === jobId);
      expect(entries.map((x) => x.kind).sort()).toEqual(['hold', 'release']);
    });

    it(`POST /v1/images/${route}: a wait that runs out is a 504 'timeout' the SDK does not retry, naming the job, which stays queued`, async () => {
      const headers = { 'Idempotency-Key': `outwaited-${route}` };
      const { answer, jobId } = await inFlight(call, headers);
      const e = expectNotRetried(await outwait(answer), 504, 'timeout');
      expect(e.message).toContain(jobId);
      expect((await job(jobId)).status).toBe('queued');
      timedOut.push({ route, call, headers, jobId });
    });
  }

  it('the jobs answered 504 run on as native jobs, each charged once; the request sent again with its Idempotency-Key answers their images', async () => {
    expect(timedOut.map((x) => x.route)).toEqual(['generations', 'edits']);
    await t.startWorker({ pollMs: 50 });
    const count = (await jobs()).length;
    for (const { call, headers, jobId } of timedOut) {
      await waitFor(async () => (await job(jobId)).status === 'completed', `job ${jobId} to complete`, 30_000);
      const again = await call(client, headers);
      const result = (await (await fetch(`${base}/jobs/${jobId}`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as { result: { urls: string[] } };
      expect(again.data!.map((d) => d.url)).toEqual(result.result.urls.map((u) => (u.startsWith('/') ? `http://mediagen.test${u}` : u)));
      const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((x) => x.jobId === jobId);
      const amounts = (kind: string) => entries.filter((x) => x.kind === kind).map((x) => x.amountMicros);
      expect(amounts('charge')).toHaveLength(1);
      expect(amounts('charge')).toEqual(amounts('hold'));
    }
    expect((await jobs()).length).toBe(count);
  });
});

describe.each(backends)('the images routes when their job fails, on $name', { timeout: 60_000 }, (backend) => {
  let s: LiveServer;
  beforeAll(async () => {
    // Sandbox: a prompt's marker fails the job as a real failure of that code does (docs/sandbox.md).
    s = await startLive(backend, { sandbox: true });
  });
  afterAll(async () => {
    await s?.t.close();
  });

  it("a failed job is a 500 whose code is the job's, which the SDK does not retry; its hold is released", async () => {
    const sent: string[] = [];
    const counting: typeof fetch = (input, init) => {
      sent.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    };
    const client = new OpenAI({ apiKey: s.t.token, baseURL: `${s.url}/v1`, fetch: counting });
    const err = await client.images.generate({ model: B1, prompt: 'a fox [mediagen:fail=input_fetch_failed]', size: '512x512' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(500);
    expect(e.error).toEqual({ message: expect.any(String), type: 'server_error', param: null, code: 'input_fetch_failed' });
    expect(e.headers?.get('x-should-retry')).toBe('false');
    expect(sent.filter((x) => x.startsWith('POST'))).toHaveLength(1);
    const page = (await native(s, '/jobs')) as { items: { job_id: string; status: string }[] };
    expect(page.items.map((j) => j.status)).toEqual(['failed']);
    const entries = (await s.t.store.billing.listEntries(s.t.workspaceId)).filter((x) => x.jobId === page.items[0]!.job_id);
    expect(entries.map((x) => x.kind).sort()).toEqual(['hold', 'release']);
  });
});
