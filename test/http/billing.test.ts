import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { expectLedgerConsistent, runNextJob } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';
const B1_PRICE = 40_400;
let t: TestApp;
afterEach(async () => t?.close());

const create = async (model = B1, body: Json = { prompt: 'a red fox' }) => {
  const res = await generate(t, model, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { job_id: string; status: string };
};
const holdOf = async (jobId: string) => (await t.store.billing.listEntries(t.workspaceId)).find((e) => e.jobId === jobId && e.kind === 'hold')?.amountMicros;
const balance = () => expectLedgerConsistent(t.store, t.workspaceId);

describe('billing through the API', () => {
  it('holds the price of each request from the spec table when the job is admitted', async () => {
    t = await createTestApp();
    const cases: [string, Json, number][] = [
      ['image/vendor-a/model-a-2/medium', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K' }, 30_000],
      ['image/vendor-a/model-a-2/large', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_style_references: [{ url: 'https://example.com/a.png' }] }, 65_000],
      ['image/vendor-a/model-a-2/medium-turbo', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', moodboards: [{ id: '00000000-0000-4000-8000-000000000000' }] }, 20_000],
      [B1, { prompt: 'p', mode: 'max', style_images: [{ url: 'https://example.com/a.png' }, { url: 'https://example.com/b.png' }] }, 106_000],
      ['video/vendor-d/model-d-fast', { prompt: 'p', duration: 4, generate_audio: true }, 630_000],
      ['video/vendor-e/model-e-1', { prompt: 'p', mode: 'pro', duration: 10 }, 772_000],
      ['video/vendor-f/model-f', { prompt: 'p' }, 451_500],
      ['audio/vendor-l/model-l-1', { prompt: 'p', duration: 30 }, 60_000],
    ];
    for (const [model, body, price] of cases) {
      const { job_id } = await create(model, body);
      expect(await holdOf(job_id), model).toBe(price);
    }
    expect(await balance()).toEqual({ balance: 1_000_000_000, held: cases.reduce((s, c) => s + c[2], 0) });
  });

  it('answers 402 with the billing explanation when the available balance does not cover the price, and creates nothing', async () => {
    t = await createTestApp({ balanceMicros: B1_PRICE + 10_000 });
    await create();
    const res = await generate(t, B1, { prompt: 'a second fox' });
    const error = errorOf(res, 402);
    expect(error).toBe(
      'insufficient API balance: this request costs $0.040400 and the workspace has $0.010000 available ($0.040400 of its $0.050400 balance is held for jobs in progress)',
    );
    const body = res.json() as Json;
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.message).toMatch(/API balance is separate from the workspace's compute-unit balance/);
    expect(body.message).toMatch(/must be topped up/);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toHaveLength(1);
    expect(await balance()).toEqual({ balance: B1_PRICE + 10_000, held: B1_PRICE });
  });

  it('charges a completed job exactly its hold, once, at its completion time', async () => {
    t = await createTestApp({ balanceMicros: 1_000_000 });
    const { job_id } = await create();
    const { ended } = await runNextJob(t.services.runs, 'completed');
    const charges = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ jobId: job_id, amountMicros: B1_PRICE, at: ended!.completedAt })]);
    expect(await balance()).toEqual({ balance: 1_000_000 - B1_PRICE, held: 0 });
  });

  it('releases the hold of a failed job and of a job cancelled while running or backlogged', async () => {
    t = await createTestApp({ balanceMicros: 1_000_000, limits: { maxConcurrentJobs: 2, maxBackloggedJobs: 5 } });
    await create();
    const running = await create();
    const backlogged = await create();
    expect(backlogged.status).toBe('backlogged');
    await runNextJob(t.services.runs, 'failed');
    expect(await balance()).toEqual({ balance: 1_000_000, held: 2 * B1_PRICE });
    const claimed = await t.services.runs.claim();
    expect(claimed?.id).toBe(running.job_id);
    expect((await del(t, `/jobs/${running.job_id}`)).statusCode).toBe(200);
    expect((await del(t, `/jobs/${backlogged.job_id}`)).statusCode).toBe(200);
    expect(await balance()).toEqual({ balance: 1_000_000, held: 0 });
    const kinds = (await t.store.billing.listEntries(t.workspaceId)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'release')).toHaveLength(3);
    expect(kinds).not.toContain('charge');
  });

  it('lets jobs in flight finish and be charged when the balance runs out', async () => {
    t = await createTestApp({ balanceMicros: 2 * B1_PRICE });
    await create();
    await create();
    errorOf(await generate(t, B1, { prompt: 'one too many' }), 402);
    await runNextJob(t.services.runs, 'completed');
    await runNextJob(t.services.runs, 'completed');
    expect(await balance()).toEqual({ balance: 0, held: 0 });
    errorOf(await generate(t, B1, { prompt: 'still refused' }), 402);
  });

  it('does not charge a job whose worker lost it to a cancel: the ending rolls back', async () => {
    t = await createTestApp({ balanceMicros: 1_000_000 });
    const { job_id } = await create();
    const job = (await t.services.runs.claim())!;
    await t.services.runs.advance(job, 'scheduled', 'processing');
    await t.services.runs.advance(job, 'processing', 'sampling');
    expect((await del(t, `/jobs/${job_id}`)).statusCode).toBe(200);
    expect(await t.services.runs.complete(job, 'sampling', { urls: [] })).toEqual({ kind: 'lost', why: 'deleted', outputsGo: true });
    expect(await balance()).toEqual({ balance: 1_000_000, held: 0 });
    expect((await t.store.billing.listEntries(t.workspaceId)).map((e) => e.kind).sort()).toEqual(['hold', 'release', 'top_up']);
  });

  it('prices from the config file apply to holds and charges', async () => {
    t = await createTestApp({ balanceMicros: 1_000_000, prices: { [B1]: { standard: 7_000, per_style_image: 1_000 } } });
    const { job_id } = await create(B1, { prompt: 'p', style_images: [{ url: 'https://example.com/a.png' }] });
    expect(await holdOf(job_id)).toBe(8_000);
  });

  it('refuses a request with 429, not 402, when the balance covers it but the workspace is full; nothing is held', async () => {
    t = await createTestApp({ balanceMicros: 1_000_000, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 } });
    await create();
    errorOf(await generate(t, B1, { prompt: 'p' }), 429);
    expect(await balance()).toEqual({ balance: 1_000_000, held: B1_PRICE });
  });
});
