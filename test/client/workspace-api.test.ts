import { afterEach, describe, expect, it } from 'vitest';
import { Mediagen, MediagenError } from '../../packages/client/src/index.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';
import { memberToken } from '../helpers/members.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' } as const;

/**
 * The typed client's methods for the console's endpoints (issue 21) against a listening server,
 * over real HTTP: workspace, tokens, webhooks, job details, the jobs window and quotes.
 */
describe.each(backends)('the typed client: workspace, tokens, webhooks, job details and quotes on $name', (backend) => {
  let t: TestApp;
  let mg: Mediagen;
  afterEach(async () => t?.close());

  const start = async () => {
    t = await createTestApp({ backend, now: '2026-11-22T12:00:00Z' });
    const baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
    mg = new Mediagen({ baseUrl, token: t.token, retry: false });
    return baseUrl;
  };
  const statusOf = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MediagenError);
    return (err as MediagenError).status;
  };

  it('reads the workspace, creates, lists and revokes tokens, and a revoked token is refused', async () => {
    const baseUrl = await start();
    const ws = await mg.workspace.get();
    expect(ws).toMatchObject({ name: 'default', role: 'owner', member_email: 'owner@localhost', token: { name: 'default' }, available_usd: '1000.000000' });

    t.clock.advance(1000);
    const created = await mg.tokens.create('console');
    expect(created.secret).toMatch(/^mg_/);
    const bot = new Mediagen({ baseUrl, token: created.secret, retry: false });
    expect((await bot.workspace.get()).token).toEqual({ id: created.token.id, name: 'console' });
    expect((await mg.tokens.list()).map((x) => [x.name, x.current])).toEqual([
      ['console', false],
      ['default', true],
    ]);
    const revoked = await mg.tokens.revoke(created.token.id);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    expect(await statusOf(bot.workspace.get())).toBe(401);
  });

  it('creates a token with limits of its own, lists its limits and spend, and its creates are refused by them with their codes', async () => {
    const baseUrl = await start();
    const created = await mg.tokens.create('campaign', { limits: { spend_limit_usd: '0.05', spend_period: 'month', models: ['image/vendor-a/*'], max_concurrent_jobs: 2 } });
    expect(created.token.limits).toEqual({ spend_limit_usd: '0.050000', spend_period: 'month', models: ['image/vendor-a/*'], max_concurrent_jobs: 2 });
    const app = new Mediagen({ baseUrl, token: created.secret, retry: false });
    await app.generate(A2, BODY);
    const listed = (await mg.tokens.list()).find((x) => x.id === created.token.id)!;
    expect(listed.limits).toEqual(created.token.limits);
    expect(listed.spend).toEqual({ period_start: '2026-11-01T00:00:00.000000Z', spent_usd: '0.030000', jobs_in_flight: 1 });
    const refused = async (call: Promise<unknown>) => {
      const err = (await call.then(() => undefined, (e: unknown) => e)) as MediagenError;
      expect(err).toBeInstanceOf(MediagenError);
      return [err.status, (err.body as { code?: string }).code];
    };
    expect(await refused(app.generate('image/vendor-b/model-b-1', { prompt: 'a fox' }))).toEqual([403, 'model_not_allowed']);
    expect(await refused(app.generate(A2, BODY))).toEqual([402, 'token_budget_exceeded']);
    // The workspace's own token is not bound by them.
    await mg.generate(A2, BODY);
  });

  it("shows and rotates the webhook secret, lists the workspace's deliveries page by page and a job's own, and a member gets 403 on secrets and tokens", async () => {
    const baseUrl = await start();
    const before = await mg.webhooks.secret();
    const rotated = await mg.webhooks.rotateSecret();
    expect(rotated.secret).not.toBe(before.secret);
    expect(rotated.previous_secret_valid_until).toEqual(expect.any(String));

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const job = await mg.generate(A2, BODY, { webhookUrl: 'https://receiver.example/hook' });
      await runNextJob(t.services.runs, 'completed');
      ids.push(job.job_id);
    }
    const page = await mg.webhooks.deliveries({ limit: 2 });
    expect(page.items.map((d) => d.job_id)).toEqual([ids[2], ids[1]]);
    expect(page.next_cursor).toEqual(expect.any(String));
    const all: string[] = [];
    for await (const d of mg.webhooks.iterateDeliveries({ limit: 2 })) all.push(d.job_id);
    expect(all).toEqual([...ids].reverse());
    // One job's own deliveries: the same delivery the workspace's list shows for it.
    const own = await mg.jobs.webhookDeliveries(ids[1]!);
    expect(own.map((d) => d.webhook_id)).toEqual([page.items[1]!.webhook_id]);
    expect(own[0]).toMatchObject({ event: 'completed', url: 'https://receiver.example/hook' });

    const member = new Mediagen({ baseUrl, token: await memberToken(t, 'ada@example.com', 'member'), retry: false });
    expect((await member.workspace.get()).role).toBe('member');
    expect(await statusOf(member.webhooks.secret())).toBe(403);
    expect(await statusOf(member.webhooks.rotateSecret())).toBe(403);
    expect(await statusOf(member.tokens.list())).toBe(403);
    expect(await statusOf(member.tokens.create('x'))).toBe(403);
    expect((await member.webhooks.deliveries()).items).toHaveLength(3);
  });

  it('quotes a request, then shows the job it made with the same price, and lists jobs in a creation window', async () => {
    await start();
    const quote = await mg.models.quote(A2, BODY);
    expect(quote).toMatchObject({ model: A2, price_micro_usd: 30_000, price_usd: '0.030000', metered: false });
    const training = await mg.models.quote('loraTraining', { name: 'Red', urls: ['https://assets.example/a.png'], trigger_word: 'reddish' });
    expect(training.model).toBe('loraTraining');
    const err = await mg.models.quote(A2, { ...BODY, aspect_ratio: '5:7' } as never).catch((e: unknown) => e as MediagenError);
    expect(err).toBeInstanceOf(MediagenError);
    expect((err as MediagenError).status).toBe(400);
    expect((err as MediagenError).message).toContain('aspect_ratio');

    const early = await mg.generate(A2, BODY);
    t.clock.advance(60_000);
    const job = await mg.generate(A2, BODY);
    await runNextJob(t.services.runs, 'completed');
    const details = await mg.jobs.details(job.job_id);
    expect(details).toMatchObject({ job: { job_id: job.job_id, status: 'queued' }, price_usd: quote.price_usd, billing: 'held', cost_usd: null });
    expect(details.request).toMatchObject(BODY);
    expect(details.timeline.map((s) => s.status)).toEqual(['queued']);
    expect((await mg.jobs.details(early.job_id))).toMatchObject({ billing: 'charged', cost_usd: '0.030000' });

    const window = await mg.jobs.list({ start: '2026-11-22T12:00:30Z', end: '2026-11-22T12:02:00Z' });
    expect(window.items.map((j) => j.job_id)).toEqual([job.job_id]);
    expect((await mg.jobs.list({ end: '2026-11-22T12:00:30Z', status: 'completed' })).items.map((j) => j.job_id)).toEqual([early.job_id]);
    expect(await statusOf(mg.jobs.list({ start: '2026-11-23T00:00:00Z', end: '2026-11-22T00:00:00Z' }))).toBe(400);
  });
});
