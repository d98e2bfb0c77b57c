import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, del, errorOf, generate, get, walkPages, BAD_PAGE_QUERIES } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
const A2_BODY = { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' };
const B1_BODY = { prompt: 'a blue bird' };

interface JobJson {
  job_id: string;
  type: string;
  status: string;
  created_at: string;
  /** null in a creation response; absent from GET until the job ends. */
  completed_at?: string | null;
  result?: unknown;
}

async function createMany(t: TestApp, n: number, model = A2, body: object = A2_BODY): Promise<JobJson[]> {
  const out: JobJson[] = [];
  for (let i = 0; i < n; i++) {
    const res = await generate(t, model, body);
    expect(res.statusCode).toBe(200);
    out.push(res.json());
  }
  return out;
}

async function listAll(t: TestApp, query: string): Promise<{ ids: string[]; pages: number }> {
  const { items, pages } = await walkPages<JobJson>(t, `/jobs?${query}`);
  return { ids: items.map((j) => j.job_id), pages };
}

describe.each(backends)('GET /jobs pagination on $name', (backend) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ backend });
  });
  afterEach(() => t.close());

  it('pages through jobs all created in the same millisecond without skipping or repeating one', async () => {
    // The clock does not move: every job is created in the same millisecond.
    const created = await createMany(t, 57);
    const { ids, pages } = await listAll(t, 'limit=5');
    expect(pages).toBe(12);
    expect(ids).toHaveLength(57);
    expect(new Set(ids).size).toBe(57);
    expect(ids).toEqual(created.map((j) => j.job_id).reverse());
  });

  it('orders newest first and gives strictly decreasing created_at', async () => {
    await createMany(t, 3);
    t.clock.advance(1000);
    await createMany(t, 3);
    const items = (await get(t, '/jobs')).json().items as JobJson[];
    const times = items.map((j) => j.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
  });

  it('next_cursor is null on the last page, including a page that is exactly full', async () => {
    await createMany(t, 4);
    const full = (await get(t, '/jobs?limit=4')).json();
    expect(full.items).toHaveLength(4);
    expect(full.next_cursor).toBeNull();
    const partial = (await get(t, '/jobs?limit=3')).json();
    expect(partial.next_cursor).toBe(partial.items[2].created_at);
    const last = (await get(t, `/jobs?limit=3&cursor=${encodeURIComponent(partial.next_cursor)}`)).json();
    expect(last.items).toHaveLength(1);
    expect(last.next_cursor).toBeNull();
  });

  it('an empty store lists no items and a null cursor', async () => {
    expect((await get(t, '/jobs')).json()).toEqual({ items: [], next_cursor: null });
  });

  it('cursor returns jobs created strictly before that time, in any ISO 8601 UTC form', async () => {
    await createMany(t, 2);
    t.clock.set('2026-11-22T12:00:01Z');
    await createMany(t, 2);
    for (const cursor of ['2026-11-22T12:00:01Z', '2026-11-22T12:00:01.000Z', '2026-11-22T12:00:01.000000Z', '2026-11-22T13:00:01+01:00']) {
      const page = (await get(t, `/jobs?cursor=${encodeURIComponent(cursor)}`)).json();
      expect(page.items).toHaveLength(2);
    }
  });

  it('defaults to 100 items per page and accepts up to 1000', async () => {
    await createMany(t, 101);
    const def = (await get(t, '/jobs')).json();
    expect(def.items).toHaveLength(100);
    expect(def.next_cursor).not.toBeNull();
    expect((await get(t, '/jobs?limit=1000')).json().items).toHaveLength(101);
    expect((await get(t, '/jobs?limit=1')).json().items).toHaveLength(1);
  });

  it('types filters on model paths, comma-separated, and pages within the filter', async () => {
    const a = await createMany(t, 3, A2, A2_BODY);
    const b = await createMany(t, 4, B1, B1_BODY);
    const onlyB = await listAll(t, `types=${encodeURIComponent(B1)}&limit=2`);
    expect(onlyB.ids).toEqual(b.map((j) => j.job_id).reverse());
    const both = await listAll(t, `types=${encodeURIComponent(`${A2},${B1}`)}`);
    expect(both.ids).toHaveLength(a.length + b.length);
    const items = (await get(t, `/jobs?types=${encodeURIComponent(A2)}`)).json().items as JobJson[];
    expect(items.every((j) => j.type === A2)).toBe(true);
  });

  it('status filters on one status', async () => {
    await createMany(t, 2);
    expect((await get(t, '/jobs?status=queued')).json().items).toHaveLength(2);
    expect((await get(t, '/jobs?status=completed')).json().items).toHaveLength(0);
  });
});

describe('GET /jobs query validation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it.each<[string, string]>([
    ...BAD_PAGE_QUERIES,
    ['cursor=2026-11-22T25:00:00Z', 'cursor'],
    ['status=done', 'status'],
    ['status=', 'status'],
    ['types=image/vendor-x/nothing', 'types'],
    ['types=', 'types'],
    [`types=${encodeURIComponent(`${A2},`)}`, 'types'],
    ['limt=5', 'limt'],
  ])('GET /jobs?%s is 400 naming %s', async (query, param) => {
    expect(errorOf(await get(t, `/jobs?${query}`), 400)).toContain(param);
  });

  it("a cursor whose '+' arrived as a space says to percent-encode it", async () => {
    expect(errorOf(await get(t, '/jobs?cursor=2026-11-22T13:00:00+01:00'), 400)).toContain('%2B');
  });

  it('job responses are marked not cacheable', async () => {
    expect((await get(t, '/jobs')).headers['cache-control']).toBe('no-store');
  });

  it.each(['limit=1', 'limit=1000', 'status=backlogged', 'status=intermediate-complete', 'status=cancelled'])(
    'GET /jobs?%s is accepted',
    async (query) => {
      expect((await get(t, `/jobs?${query}`)).statusCode).toBe(200);
    },
  );
});

describe.each(backends)('GET and DELETE /jobs/{id} on $name', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(() => t.close());

  it('GET returns the job as created, with its type, less the two null fields only creation shows', async () => {
    const created = (await generate(t, A2, A2_BODY)).json() as JobJson;
    const res = await get(t, `/jobs/${created.job_id}`);
    expect(res.statusCode).toBe(200);
    const { completed_at: _c, result: _r, ...pending } = created;
    expect(res.json()).toEqual(pending);
    expect(created.type).toBe(A2);
  });

  it('GET accepts the id in upper case', async () => {
    const created = (await generate(t, A2, A2_BODY)).json() as JobJson;
    expect((await get(t, `/jobs/${created.job_id.toUpperCase()}`)).json().job_id).toBe(created.job_id);
  });

  it.each([
    ['an unknown id', '3f1d2c4b-0000-4000-8000-000000000000'],
    ['a malformed id', 'not-a-uuid'],
    ['an id with a trailing character', '3f1d2c4b-0000-4000-8000-0000000000001'],
  ])('GET of %s is 404 with a JSON error', async (_name, id) => {
    expect(errorOf(await get(t, `/jobs/${id}`), 404)).toMatch(/not found/);
  });

  it.each([
    ['an unknown id', '3f1d2c4b-0000-4000-8000-000000000000'],
    ['a malformed id', 'not-a-uuid'],
  ])('DELETE of %s is 404 with a JSON error', async (_name, id) => {
    errorOf(await del(t, `/jobs/${id}`), 404);
  });

  it('DELETE removes the job: 200, then GET is 404, the list omits it, and a second DELETE is 404', async () => {
    const created = (await generate(t, A2, A2_BODY)).json() as JobJson;
    const res = await del(t, `/jobs/${created.job_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ job_id: created.job_id, deleted: true });
    errorOf(await get(t, `/jobs/${created.job_id}`), 404);
    const ids = ((await get(t, '/jobs?limit=1000')).json().items as JobJson[]).map((j) => j.job_id);
    expect(ids).not.toContain(created.job_id);
    errorOf(await del(t, `/jobs/${created.job_id}`), 404);
  });
});

describe.each(backends)('the job shape outside creation responses on $name (spec 2.1)', (backend) => {
  let t: TestApp;
  let engine: ScriptedEngine;
  beforeEach(async () => {
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 1 } });
  });
  afterEach(async () => {
    engine.hold?.resolve();
    await t.close();
  });

  const shown = async (id: string) => (await get(t, `/jobs/${id}`)).json() as JobJson;
  const listed = async (id: string) => ((await get(t, '/jobs')).json().items as JobJson[]).find((j) => j.job_id === id)!;

  it('creation shows completed_at and result as null; GET and the list leave both out until the job ends, then show both', async () => {
    const running = (await generate(t, B1, B1_BODY)).json() as JobJson;
    const waiting = (await generate(t, B1, B1_BODY)).json() as JobJson;
    for (const created of [running, waiting]) {
      expect(created).toHaveProperty('completed_at', null);
      expect(created).toHaveProperty('result', null);
    }
    // One slot: the first job is held sampling, the second waits queued.
    await waitFor(async () => (await shown(running.job_id)).status === 'sampling', 'the first job to be sampling');
    expect((await shown(waiting.job_id)).status).toBe('queued');
    for (const id of [running.job_id, waiting.job_id]) {
      for (const job of [await shown(id), await listed(id)]) {
        expect(Object.keys(job).sort()).toEqual(['created_at', 'job_id', 'status', 'type']);
      }
    }

    engine.hold!.resolve();
    const done = await waitFor(async () => {
      const job = await shown(running.job_id);
      return job.status === 'completed' && job;
    }, 'the first job to complete');
    expect(done).toEqual({
      job_id: running.job_id,
      type: B1,
      status: 'completed',
      created_at: running.created_at,
      completed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
      result: { urls: [expect.stringMatching(/\/output\.png$/)] },
    });
    expect(await listed(running.job_id)).toEqual(done);
  });

  it('a failed job shows completed_at and its error, and no result', async () => {
    engine.hold = undefined;
    engine.failWith = new Error('boom');
    const { job_id } = (await generate(t, B1, B1_BODY)).json() as JobJson;
    const failed = await waitFor(async () => {
      const job = await shown(job_id);
      return job.status === 'failed' && job;
    }, 'the job to fail');
    expect(Object.keys(failed).sort()).toEqual(['completed_at', 'created_at', 'error', 'job_id', 'status', 'type']);
    expect(await listed(job_id)).toEqual(failed);
  });
});
