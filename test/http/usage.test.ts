import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, del, errorOf, generate, get, walkPages } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { runNextJob } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';
const F = 'video/vendor-f/model-f';
let t: TestApp;
afterEach(async () => t?.close());

interface UsageItem {
  job_id: string;
  type: string;
  completed_at: string;
  cost_usd: string;
  compute_units: number;
}
interface UsagePage {
  items: UsageItem[];
  next_cursor: string | null;
}

const usage = async (query = '', token?: string) => {
  const res = await get(t, `/usage${query}`, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as UsagePage;
};
/** Creates a job and runs it to `outcome`; returns its id. */
const jobThat = async (outcome: 'completed' | 'failed', model = B1) => {
  const res = await generate(t, model, { prompt: 'p' });
  expect(res.statusCode, res.body).toBe(200);
  await runNextJob(t.services.runs, outcome);
  return (res.json() as { job_id: string }).job_id;
};

describe('GET /usage', () => {
  it('lists completed jobs newest first with their cost and compute units; failed, cancelled and unfinished jobs are absent', async () => {
    t = await createTestApp();
    const a = await jobThat('completed');
    t.clock.advance(1000);
    await jobThat('failed');
    const f = await jobThat('completed', F);
    const cancelled = (await generate(t, B1, { prompt: 'p' })).json() as { job_id: string };
    await del(t, `/jobs/${cancelled.job_id}`);
    await generate(t, B1, { prompt: 'still queued' });
    const page = await usage();
    expect(page).toEqual({
      items: [
        { job_id: f, type: F, completed_at: expect.any(String), cost_usd: '0.451500', compute_units: 45.15 },
        { job_id: a, type: B1, completed_at: expect.any(String), cost_usd: '0.040400', compute_units: 4.04 },
      ],
      next_cursor: null,
    });
    // completed_at is the job's own completion time.
    const job = (await get(t, `/jobs/${a}`)).json() as { completed_at: string };
    expect(page.items[1]!.completed_at).toBe(job.completed_at);
  });

  it('keeps a job in the report after the job is deleted', async () => {
    t = await createTestApp();
    const a = await jobThat('completed');
    expect((await del(t, `/jobs/${a}`)).statusCode).toBe(200);
    expect((await get(t, `/jobs/${a}`)).statusCode).toBe(404);
    expect((await usage()).items.map((i) => i.job_id)).toEqual([a]);
  });

  it('covers the last 30 days by default and honours start (inclusive) and end (exclusive)', async () => {
    t = await createTestApp({ now: '2026-10-01T00:00:00Z' });
    const old = await jobThat('completed');
    t.clock.set(Date.parse('2026-11-01T00:00:00Z'));
    const mid = await jobThat('completed');
    t.clock.set(Date.parse('2026-11-20T00:00:00Z'));
    const recent = await jobThat('completed');
    t.clock.set(Date.parse('2026-11-22T00:00:00Z'));
    expect((await usage()).items.map((i) => i.job_id)).toEqual([recent, mid]);
    expect((await usage('?start=2026-09-01T00:00:00Z')).items.map((i) => i.job_id)).toEqual([recent, mid, old]);
    expect((await usage('?start=2026-09-01T00:00:00Z&end=2026-11-20T00:00:00Z')).items.map((i) => i.job_id)).toEqual([mid, old]);
    expect((await usage('?start=2026-11-01T00:00:00Z&end=2026-11-20T00:00:00.000001Z')).items.map((i) => i.job_id)).toEqual([recent, mid]);
    // Without start, the window is the 30 days before end.
    expect((await usage('?end=2026-10-15T00:00:00Z')).items.map((i) => i.job_id)).toEqual([old]);
  });

  it('pages with limit and cursor without skipping or repeating jobs completed in the same millisecond', async () => {
    t = await createTestApp();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await jobThat('completed'));
    const { items, pages } = await walkPages<UsageItem>(t, '/usage?limit=3');
    expect(pages).toBe(3);
    expect(items.map((i) => i.job_id)).toEqual([...ids].reverse());
  });

  it("shows only the caller's workspace", async () => {
    t = await createTestApp();
    await jobThat('completed');
    const other = await t.newWorkspace('other');
    expect((await usage('', other.token)).items).toEqual([]);
  });

  it.each([
    ['?limit=0', "query parameter 'limit' must be an integer from 1 to 1000, got '0'"],
    ['?limit=1001', "query parameter 'limit' must be an integer from 1 to 1000, got '1001'"],
    ['?start=yesterday', "query parameter 'start' must be an ISO 8601 date-time"],
    ['?end=2026-13-01T00:00:00Z', "query parameter 'end' must be an ISO 8601 date-time"],
    ['?cursor=x', "query parameter 'cursor' must be an ISO 8601 date-time"],
    ['?start=2026-11-02T00:00:00Z&end=2026-11-01T00:00:00Z', "query parameter 'start' must not be later than 'end'"],
    ['?page=2', "unknown query parameter 'page'; allowed: start, end, cursor, limit"],
    ['?limit=1&limit=2', "query parameter 'limit' must be given at most once"],
  ])('refuses %s with 400 naming the parameter', async (query, message) => {
    t = await createTestApp();
    expect(errorOf(await get(t, `/usage${query}`), 400)).toContain(message);
  });

  it('requires a token, and is in the OpenAPI document', async () => {
    t = await createTestApp();
    errorOf(await t.app.inject({ method: 'GET', url: '/usage' }), 401);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { parameters?: { name: string }[] }>> };
    expect(doc.paths['/usage']?.get?.parameters?.map((p) => p.name).sort()).toEqual(['cursor', 'end', 'limit', 'start']);
  });
});
