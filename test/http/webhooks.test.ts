import { Webhook } from 'standardwebhooks';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { PUBLIC_URL, createTestApp, del, errorOf, generate, get, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { Receiver } from '../helpers/receiver.js';
import { runNextJob } from '../helpers/ledger.js';

const MODEL = 'image/vendor-b/model-b-1';
const OWNER = 'owner@localhost';

describe.each(backends)('webhooks: $name', (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  let dispatcher: Dispatcher;
  let sender: WebhookSender;

  /**
   * The receiver listens on loopback, so the API accepts its URL only with --allow-private-urls;
   * `allowPrivate` is the sender's own guard (a worker process started with or without the flag).
   */
  async function start(opts: { allowPrivate?: boolean } = {}) {
    t = await createTestApp({ backend, allowPrivateUrls: true });
    receiver = await new Receiver().start();
    dispatcher = createGuardedDispatcher({ allowPrivate: opts.allowPrivate ?? true });
    sender = new WebhookSender(
      { webhooks: t.services.webhooks, signals: t.services.signals, clock: t.clock, dispatcher, publicUrl: () => PUBLIC_URL, log: silentLog },
      { concurrency: 8, pollMs: 1000, timeoutMs: 5000 },
    );
  }
  afterEach(async () => {
    await sender?.stop();
    await dispatcher?.close();
    await receiver?.close();
    await t?.close();
  });

  const create = async (path = '/hook') => {
    const res = await generate(t, MODEL, { prompt: 'a red fox' }, { 'x-webhook-url': `${receiver.url}${path}` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  const secret = async () => (await t.services.webhooks.showSecret('default', OWNER)).secret;
  /** Verifies as a receiver would, whose clock reads what the server's (manual) clock reads. */
  const verify = (secretValue: string, i: number) => {
    const r = receiver.received[i]!;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t.clock.nowMs());
    try {
      return new Webhook(secretValue).verify(r.body, r.headers as Record<string, string>);
    } finally {
      vi.useRealTimers();
    }
  };
  const log = async (jobId: string) => {
    const res = await get(t, `/jobs/${jobId}/webhook-deliveries`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Json[] }).items;
  };

  it('posts the completed job exactly as GET /jobs/{id} shows it, signed so the standardwebhooks package verifies it', async () => {
    await start();
    const jobId = await create();
    const job = (await t.services.runs.claim())!;
    await t.services.runs.advance(job, 'scheduled', 'processing');
    await t.services.runs.advance(job, 'processing', 'sampling');
    await t.services.runs.complete(job, 'sampling', { urls: [`/outputs/${job.outputKey}/output.png`] });
    expect(await sender.sendDue()).toBe(1);

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.headers['content-type']).toBe('application/json');
    const shown = (await get(t, `/jobs/${jobId}`)).json() as Json;
    expect(JSON.parse(got.body)).toEqual(shown);
    expect(shown).toMatchObject({ status: 'completed', result: { urls: [`${PUBLIC_URL}/outputs/${job.outputKey}/output.png`] } });
    expect(verify(await secret(), 0)).toEqual(shown);
    expect(got.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Number(got.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.nowMs() / 1000));

    const [delivery] = await log(jobId);
    expect(delivery).toMatchObject({ webhook_id: got.headers['webhook-id'], event: 'completed', url: `${receiver.url}/hook`, state: 'delivered', next_attempt_at: null });
    expect(delivery!.attempts).toEqual([{ attempt: 1, attempted_at: expect.any(String), status: 200, error: null, duration_ms: expect.any(Number), next_retry_at: null }]);
    // Nothing more goes out for a delivered event.
    t.clock.advance(86_400_000);
    expect(await sender.sendDue()).toBe(0);
  });

  it('retries a failing receiver with backoff under one webhook-id until it accepts: three attempts', async () => {
    await start();
    receiver.script = [500, { status: 503, headers: { 'retry-after': '120' } }];
    const jobId = await create();
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    expect(receiver.received).toHaveLength(1);
    // Not due yet: the first retry waits about 5 s.
    expect(await sender.sendDue()).toBe(0);
    t.clock.advance(6_001);
    await sender.sendDue();
    expect(receiver.received).toHaveLength(2);
    // The second retry would wait about 30 s, but the receiver asked for 120 s.
    t.clock.advance(60_000);
    expect(await sender.sendDue()).toBe(0);
    t.clock.advance(61_000);
    await sender.sendDue();
    expect(receiver.received).toHaveLength(3);

    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const s = await secret();
    for (let i = 0; i < 3; i++) expect(verify(s, i)).toMatchObject({ job_id: jobId, status: 'completed' });
    const [delivery] = await log(jobId);
    expect(delivery!.state).toBe('delivered');
    const attempts = delivery!.attempts as Json[];
    expect(attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(attempts[0]!.next_retry_at).not.toBeNull();
    const wait = Date.parse(attempts[1]!.next_retry_at as string) - Date.parse(attempts[1]!.attempted_at as string);
    expect(wait).toBeGreaterThanOrEqual(120_000);
    expect(attempts[2]!.next_retry_at).toBeNull();
  });

  it('sends failed and cancelled events with completed_at and without result; a cancelled job is deleted but its event still goes out', async () => {
    await start();
    const failedId = await create('/failed');
    await runNextJob(t.services.runs, 'failed');
    const cancelledId = await create('/cancelled');
    await t.services.runs.claim();
    expect((await del(t, `/jobs/${cancelledId}`)).statusCode).toBe(200);
    await sender.sendDue();
    const byPath = Object.fromEntries(receiver.received.map((r) => [r.path, JSON.parse(r.body) as Json]));
    // At a terminal status completed_at always has a value; a job that did not complete has no
    // result, so the key is absent, as on GET (docs/decisions.md).
    expect(byPath['/failed']).toEqual({
      job_id: failedId,
      type: MODEL,
      status: 'failed',
      created_at: expect.any(String),
      completed_at: expect.any(String),
      error: { code: 'engine_failed', message: 'scripted failure' },
    });
    expect(byPath['/cancelled']).toEqual({ job_id: cancelledId, type: MODEL, status: 'cancelled', created_at: expect.any(String), completed_at: expect.any(String) });
    expect(errorOf(await get(t, `/jobs/${cancelledId}/webhook-deliveries`), 404)).toBe(`job '${cancelledId}' not found`);
  });

  it('gives up after 15 attempts over about three days and says so in the log', async () => {
    await start();
    receiver.script = Array.from({ length: 20 }, () => 500);
    const jobId = await create();
    await runNextJob(t.services.runs, 'completed');
    for (let i = 0; i < 20; i++) {
      await sender.sendDue();
      t.clock.advance(13 * 3_600_000);
    }
    expect(receiver.received).toHaveLength(15);
    const [delivery] = await log(jobId);
    expect(delivery).toMatchObject({ state: 'exhausted', next_attempt_at: null });
    const attempts = delivery!.attempts as Json[];
    expect(attempts).toHaveLength(15);
    expect(attempts[14]!.next_retry_at).toBeNull();
    expect(attempts.slice(0, 14).every((a) => a.next_retry_at !== null)).toBe(true);
    // The waits the schedule asked for add up to about three days (the test's 13 h steps only
    // make each attempt late).
    const waited = attempts.slice(0, 14).reduce((sum, a) => sum + Date.parse(a.next_retry_at as string) - Date.parse(a.attempted_at as string), 0);
    expect(waited / 3_600_000).toBeGreaterThan(60);
    expect(waited / 3_600_000).toBeLessThan(80);
  });

  it('sends user-info as Basic auth and never shows it in the delivery log', async () => {
    await start();
    const res = await generate(t, MODEL, { prompt: 'p' }, { 'x-webhook-url': receiver.url.replace('http://', 'http://hook%20user:s3cret@') + '/private' });
    const jobId = (res.json() as { job_id: string }).job_id;
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    expect(receiver.received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('hook user:s3cret').toString('base64')}`);
    const body = JSON.stringify(await log(jobId));
    expect(body).not.toContain('s3cret');
    expect(body).toContain(`"url":"${receiver.url}/private"`);
  });

  it('stops retrying when the receiver answers 410', async () => {
    await start();
    receiver.script = [410];
    const jobId = await create();
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    t.clock.advance(7 * 86_400_000);
    expect(await sender.sendDue()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    const [delivery] = await log(jobId);
    expect(delivery).toMatchObject({ state: 'gone', next_attempt_at: null, attempts: [expect.objectContaining({ status: 410, next_retry_at: null })] });
  });

  it('refuses a webhook to a loopback address from a sender without --allow-private-urls (the API had it), and the delivery log says why', async () => {
    await start({ allowPrivate: false });
    const jobId = await create();
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    expect(receiver.received).toHaveLength(0);
    const [delivery] = await log(jobId);
    expect(delivery).toMatchObject({ state: 'refused', next_attempt_at: null });
    const [attempt] = delivery!.attempts as Json[];
    expect(attempt).toMatchObject({ status: null, next_retry_at: null });
    expect(attempt!.error).toMatch(/127\.0\.0\.1 is a loopback address.*--allow-private-urls/);
    t.clock.advance(86_400_000);
    expect(await sender.sendDue()).toBe(0);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    await start();
    const before = await secret();
    const rotated = await t.services.webhooks.rotateSecret('default', OWNER);
    expect(rotated.secret).not.toBe(before);
    expect(rotated.previous_secret_valid_until).toBe(new Date(t.clock.nowMs() + 86_400_000).toISOString().replace('.000Z', '.000000Z'));
    await create();
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    expect(receiver.received[0]!.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verify(before, 0)).toBeDefined();
    expect(verify(rotated.secret, 0)).toBeDefined();

    t.clock.advance(86_400_000 + 1000);
    await create();
    await runNextJob(t.services.runs, 'completed');
    await sender.sendDue();
    expect(receiver.received[1]!.headers['webhook-signature']).toMatch(/^v1,\S+$/);
    expect(verify(rotated.secret, 1)).toBeDefined();
    expect(() => verify(before, 1)).toThrow();
  });

  it('writes no delivery for a job without X-Webhook-URL, nor a second one when a lost worker tries to complete a cancelled job', async () => {
    await start();
    const plain = (await generate(t, MODEL, { prompt: 'p' })).json() as { job_id: string };
    await runNextJob(t.services.runs, 'completed');
    expect(await log(plain.job_id)).toEqual([]);

    const jobId = await create();
    const job = (await t.services.runs.claim())!;
    await t.services.runs.advance(job, 'scheduled', 'processing');
    await t.services.runs.advance(job, 'processing', 'sampling');
    expect((await del(t, `/jobs/${jobId}`)).statusCode).toBe(200);
    expect(await t.services.runs.complete(job, 'sampling', { urls: [] })).toEqual({ kind: 'lost', why: 'deleted', outputsGo: true });
    await sender.sendDue();
    expect(receiver.received.map((r) => (JSON.parse(r.body) as Json).status)).toEqual(['cancelled']);
  });

  it('wakes the running sender at once when a job ends in this process', async () => {
    await start();
    sender.start();
    await create();
    await runNextJob(t.services.runs, 'completed');
    // The clock never moves, so only the signal can have sent it.
    for (let i = 0; i < 200 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers to a fast receiver while a slow one still holds its delivery', async () => {
    await start();
    receiver.holdPath = '/slow';
    sender.start();
    const slow = await create('/slow');
    await runNextJob(t.services.runs, 'completed');
    const fast = await create('/fast');
    await runNextJob(t.services.runs, 'completed');
    for (let i = 0; i < 300 && (await log(fast))[0]?.state !== 'delivered'; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await log(fast))[0]?.state).toBe('delivered');
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/fast', '/slow']);
    expect((await log(slow))[0]).toMatchObject({ state: 'pending', attempts: [] });
    receiver.release();
    for (let i = 0; i < 300 && (await log(slow))[0]?.state !== 'delivered'; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await log(slow))[0]?.state).toBe('delivered');
  });

  it('answers 404 for the delivery log of an unknown job or another workspace\'s job', async () => {
    await start();
    const jobId = await create();
    const other = await t.newWorkspace('other');
    errorOf(await get(t, `/jobs/${jobId}/webhook-deliveries`, other.token), 404);
    errorOf(await get(t, '/jobs/not-a-uuid/webhook-deliveries'), 404);
    expect(await log(jobId)).toEqual([]);
  });
});
