import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, generate, get, walkPages } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';
const F = 'video/vendor-f/model-f';

describe.each(backends)('GET /jobs with a creation window (start, end): $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  /** Creates a job at `at` (the clock set there) and returns its id. */
  const at = async (iso: string, model = B1) => {
    t.clock.set(Date.parse(iso));
    const res = await generate(t, model, { prompt: 'p' });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  const ids = async (query: string) => {
    const res = await get(t, `/jobs?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: { job_id: string }[] }).items.map((j) => j.job_id);
  };

  it('keeps jobs created from start (inclusive) to end (exclusive), newest first; either bound may be left out', async () => {
    t = await createTestApp({ backend, now: '2026-10-01T00:00:00Z' });
    const oct = await at('2026-10-15T00:00:00Z');
    const nov1 = await at('2026-11-01T00:00:00Z');
    const nov20 = await at('2026-11-20T00:00:00Z');
    const dec = await at('2026-12-01T00:00:00Z');
    expect(await ids('start=2026-11-01T00:00:00Z&end=2026-12-01T00:00:00Z')).toEqual([nov20, nov1]);
    expect(await ids('start=2026-11-01T00:00:00.000001Z&end=2026-12-01T00:00:00.000001Z')).toEqual([dec, nov20]);
    expect(await ids('start=2026-11-01T00:00:00Z')).toEqual([dec, nov20, nov1]);
    expect(await ids('end=2026-11-01T00:00:00Z')).toEqual([oct]);
    // An offset is honoured: 01:00+01:00 is midnight UTC.
    expect(await ids('start=2026-11-01T01:00:00%2B01:00&end=2026-11-01T00:00:00.000001Z')).toEqual([nov1]);
    // An empty window (start = end) keeps nothing.
    expect(await ids('start=2026-11-01T00:00:00Z&end=2026-11-01T00:00:00Z')).toEqual([]);
  });

  it('combines with types, status, limit and cursor, paging within the window', async () => {
    t = await createTestApp({ backend, now: '2026-11-01T00:00:00Z' });
    await at('2026-11-01T00:00:00Z');
    const [b2, f3, b4, b5, b6] = [
      await at('2026-11-02T00:00:00Z'),
      await at('2026-11-03T00:00:00Z', F),
      await at('2026-11-04T00:00:00Z'),
      await at('2026-11-05T00:00:00Z'),
      await at('2026-11-06T00:00:00Z'),
    ];
    await at('2026-11-09T00:00:00Z');
    const window = 'start=2026-11-02T00:00:00Z&end=2026-11-08T00:00:00Z';
    const { items, pages } = await walkPages<{ job_id: string }>(t, `/jobs?limit=2&${window}`);
    expect(items.map((j) => j.job_id)).toEqual([b6, b5, b4, f3, b2]);
    expect(pages).toBe(3);
    // A cursor inside the window pages from it; start still bounds the last page.
    expect(await ids(`${window}&cursor=2026-11-04T00:00:00Z`)).toEqual([f3, b2]);
    expect(await ids(`${window}&types=${F}`)).toEqual([f3]);
    // The oldest two jobs run: the first (outside the window) fails, the second completes.
    await runNextJob(t.services.runs, 'failed');
    await runNextJob(t.services.runs, 'completed');
    expect(await ids(`${window}&status=completed`)).toEqual([b2]);
    expect(await ids('status=failed')).toHaveLength(1);
    expect(await ids(`${window}&status=failed`)).toEqual([]);
    expect(await ids(`${window}&status=queued&types=${B1}&limit=2`)).toEqual([b6, b5]);
  });

  it.each([
    ['start=2026-11-02T00:00:00Z&end=2026-11-01T00:00:00Z', "query parameter 'start' must not be later than 'end'"],
    ['start=yesterday', "query parameter 'start' must be an ISO 8601 date-time"],
    ['end=2026-13-01T00:00:00Z', "query parameter 'end' must be an ISO 8601 date-time"],
    ['start=2026-11-01T00:00:00Z&start=2026-11-02T00:00:00Z', "query parameter 'start' must be given at most once"],
    ['from=2026-11-01T00:00:00Z', "unknown query parameter 'from'; allowed: cursor, limit, start, end, types, status"],
  ])('refuses %s with 400 naming the parameter', async (query, message) => {
    t = await createTestApp({ backend });
    expect(errorOf(await get(t, `/jobs?${query}`), 400)).toContain(message);
  });
});
