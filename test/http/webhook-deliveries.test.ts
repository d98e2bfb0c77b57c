import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { BAD_PAGE_QUERIES, PUBLIC_URL, createTestApp, del, errorOf, generate, get, silentLog, walkPages } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';
import { memberToken } from '../helpers/members.js';
import { Receiver } from '../helpers/receiver.js';

const MODEL = 'image/vendor-b/model-b-1';
const HOOK = 'https://receiver.example/hooks/mediagen';

interface Delivery {
  job_id: string;
  webhook_id: string;
  event: string;
  url: string;
  state: string;
  created_at: string;
  next_attempt_at: string | null;
  attempts: { attempt: number; status: number | null }[];
}

describe.each(backends)('GET /webhook-deliveries: $name', (backend) => {
  let t: TestApp;
  let receiver: Receiver | undefined;
  let dispatcher: Dispatcher | undefined;
  afterEach(async () => {
    await dispatcher?.close();
    await receiver?.close();
    await t?.close();
    receiver = undefined;
    dispatcher = undefined;
  });

  /** A job with a webhook, run to `outcome` (its end writes the delivery); its id. */
  const ended = async (outcome: 'completed' | 'failed', url = HOOK, token = t.token) => {
    const res = await generate(t, MODEL, { prompt: 'p' }, { 'x-webhook-url': url }, token);
    expect(res.statusCode, res.body).toBe(200);
    await runNextJob(t.services.runs, outcome);
    return (res.json() as { job_id: string }).job_id;
  };
  const page = async (query = '', token = t.token) => {
    const res = await get(t, `/webhook-deliveries${query}`, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { items: Delivery[]; next_cursor: string | null };
  };

  it("lists the workspace's deliveries across its jobs, newest first, each as the job's delivery log shows it plus its job id", async () => {
    t = await createTestApp({ backend });
    const first = await ended('completed');
    t.clock.advance(1000);
    const second = await ended('failed');
    const cancelled = (await generate(t, MODEL, { prompt: 'p' }, { 'x-webhook-url': `${HOOK}/c` })).json() as { job_id: string };
    expect((await del(t, `/jobs/${cancelled.job_id}`)).statusCode).toBe(200);
    // No webhook asked for: no delivery.
    await generate(t, MODEL, { prompt: 'p' });
    await runNextJob(t.services.runs, 'completed');

    const { items, next_cursor } = await page();
    expect(next_cursor).toBeNull();
    // A deleted job's delivery stays listed.
    expect(items.map((d) => [d.job_id, d.event])).toEqual([
      [cancelled.job_id, 'cancelled'],
      [second, 'failed'],
      [first, 'completed'],
    ]);
    for (const jobId of [first, second]) {
      const own = (await get(t, `/jobs/${jobId}/webhook-deliveries`)).json() as { items: Omit<Delivery, 'job_id'>[] };
      expect(items.find((d) => d.job_id === jobId)).toEqual({ job_id: jobId, ...own.items[0] });
    }
    expect(items[2]).toMatchObject({ url: HOOK, state: 'pending', attempts: [], next_attempt_at: expect.any(String) });
  });

  it('shows each attempt once the sender has tried', async () => {
    t = await createTestApp({ backend, allowPrivateUrls: true });
    receiver = await new Receiver().start();
    receiver.script = [503];
    dispatcher = createGuardedDispatcher({ allowPrivate: true });
    const sender = new WebhookSender(
      { webhooks: t.services.webhooks, signals: t.services.signals, clock: t.clock, dispatcher, publicUrl: () => PUBLIC_URL, log: silentLog },
      { concurrency: 2, pollMs: 1000, timeoutMs: 5000 },
    );
    const jobId = await ended('completed', `${receiver.url}/hook`);
    await sender.sendDue();
    t.clock.advance(10 * 60_000);
    await sender.sendDue();
    await sender.stop();
    const [delivery] = (await page()).items;
    expect(delivery).toMatchObject({ job_id: jobId, state: 'delivered', next_attempt_at: null });
    expect(delivery!.attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 503],
      [2, 200],
    ]);
  });

  it('pages with limit and cursor without skipping or repeating deliveries of jobs that ended in the same microsecond', async () => {
    t = await createTestApp({ backend });
    // The clock never moves: every job ends at the same instant.
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await ended('completed'));
    const { items, pages } = await walkPages<Delivery>(t, '/webhook-deliveries?limit=3');
    expect(pages).toBe(3);
    expect(items.map((d) => d.job_id)).toEqual([...ids].reverse());
    expect(new Set(items.map((d) => d.created_at)).size).toBe(7);
  });

  it("shows only the caller's workspace; any role may read it", async () => {
    t = await createTestApp({ backend });
    await ended('completed');
    const other = await t.newWorkspace('other');
    expect((await page('', other.token)).items).toEqual([]);
    expect((await page('', await memberToken(t, 'ada@example.com', 'member'))).items).toHaveLength(1);
  });

  it.each([...BAD_PAGE_QUERIES, ['job_id=x', 'job_id']])('refuses %s with 400 naming %s', async (query, name) => {
    t = await createTestApp({ backend });
    expect(errorOf(await get(t, `/webhook-deliveries?${query}`), 400)).toContain(`'${name}'`);
  });
});
