import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
const A2_BODY = { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' };

interface Details {
  job: Json;
  request: Json | null;
  request_id: string | null;
  timeline: { status: string; at: string }[];
  price_usd: string | null;
  cost_usd: string | null;
  billing: string;
}

describe.each(backends)('GET /jobs/{id}/details: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const create = async (model: string, body: Json, headers: Record<string, string> = {}) => {
    const res = await generate(t, model, body, headers);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  const details = async (id: string, token = t.token) => {
    const res = await get(t, `/jobs/${id}/details`, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Details;
  };

  it('shows a completed job as GET /jobs/{id} does, with its stored request, request id, every status change, price and cost', async () => {
    t = await createTestApp({ backend });
    const id = await create(A2, A2_BODY, { 'x-request-id': 'console-test-1' });
    t.clock.advance(250);
    const { job } = await runNextJob(t.services.runs, 'completed');
    const shown = await details(id);
    expect(shown.job).toEqual((await get(t, `/jobs/${id}`)).json());
    expect(shown.job).toMatchObject({ job_id: id, status: 'completed' });
    // The body as validated and stored: the defaults are there.
    expect(shown.request).toEqual(job.request);
    expect(shown.request).toMatchObject({ ...A2_BODY, creativity: expect.any(String) });
    expect(Object.keys(shown.request!).length).toBeGreaterThan(Object.keys(A2_BODY).length);
    expect(shown.request_id).toBe('console-test-1');
    expect(shown.timeline).toEqual([
      { status: 'queued', at: '2026-11-22T12:00:00.000000Z' },
      { status: 'scheduled', at: '2026-11-22T12:00:00.250000Z' },
      { status: 'processing', at: '2026-11-22T12:00:00.250000Z' },
      { status: 'sampling', at: '2026-11-22T12:00:00.250000Z' },
      { status: 'completed', at: '2026-11-22T12:00:00.250000Z' },
    ]);
    expect(shown).toMatchObject({ price_usd: '0.030000', cost_usd: '0.030000', billing: 'charged' });
  });

  it('shows a failed job released, with no cost', async () => {
    t = await createTestApp({ backend });
    const id = await create(B1, { prompt: 'p' });
    await runNextJob(t.services.runs, 'failed');
    const shown = await details(id);
    expect(shown.job).toMatchObject({ status: 'failed', error: { code: 'engine_failed' } });
    expect(shown.timeline.map((s) => s.status)).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'failed']);
    expect(shown).toMatchObject({ request: { prompt: 'p' }, price_usd: '0.040400', cost_usd: null, billing: 'released' });
  });

  it('shows a job in progress held, and a cancelled one released', async () => {
    t = await createTestApp({ backend });
    const id = await create(B1, { prompt: 'p' });
    expect(await details(id)).toMatchObject({ timeline: [{ status: 'queued' }], price_usd: '0.040400', cost_usd: null, billing: 'held' });
    await t.services.runs.claim();
    expect((await t.app.inject({ method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);
    const shown = await details(id);
    expect(shown.timeline.map((s) => s.status)).toEqual(['queued', 'scheduled', 'cancelled']);
    expect(shown).toMatchObject({ cost_usd: null, billing: 'released' });
  });

  it('starts the history at backlogged for a job admitted to the backlog', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 5 } });
    await create(B1, { prompt: 'first' });
    const id = await create(B1, { prompt: 'second' });
    expect((await details(id)).timeline.map((s) => s.status)).toEqual(['backlogged']);
  });

  it('shows the request of a zero-data-retention job until it ends, and null once it was erased', async () => {
    t = await createTestApp({ backend });
    const id = await create(A2, { ...A2_BODY, prompt: 'a secret' }, { 'x-api-zero-data-retention': '1' });
    expect((await details(id)).request).toMatchObject({ prompt: 'a secret' });
    await runNextJob(t.services.runs, 'completed');
    const shown = await details(id);
    expect(shown.request).toBeNull();
    expect(JSON.stringify(shown)).not.toContain('a secret');
    expect(shown).toMatchObject({ job: { status: 'completed' }, billing: 'charged', cost_usd: '0.030000' });
  });

  it('answers 404 exactly as GET /jobs/{id} does for unknown, malformed, deleted and foreign ids', async () => {
    t = await createTestApp({ backend });
    const id = await create(B1, { prompt: 'p' });
    const other = await t.newWorkspace('other');
    const unknown = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
    for (const [path, token] of [[unknown, t.token], ['not-a-uuid', t.token], [id, other.token]] as const) {
      expect(errorOf(await get(t, `/jobs/${path}/details`, token), 404)).toBe(errorOf(await get(t, `/jobs/${path}`, token), 404));
    }
    expect((await del(t, `/jobs/${id}`)).statusCode).toBe(200);
    expect(errorOf(await get(t, `/jobs/${id}/details`), 404)).toBe(`job '${id}' not found`);
    // Upper case is the same id, as for GET /jobs/{id}.
    const again = await create(B1, { prompt: 'p' });
    expect((await details(again.toUpperCase())).job.job_id).toBe(again);
  });
});
