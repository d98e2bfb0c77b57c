import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { msToMicros } from '../../src/lib/time.js';
import { createTestApp, del, errorOf, generate, get, walkPages } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';
import { memberToken } from '../helpers/members.js';
import { B1, F, MINIMAL } from './generate-support.js';

/** Issue 40, point 5: X-Mediagen-Tags on a create, the job's tags, GET /jobs?tag= and usage by tag. */

const TAGS = 'x-mediagen-tags';

interface JobJson {
  job_id: string;
  type: string;
  status: string;
  tags?: string[];
}

interface Group {
  day?: string;
  model?: string;
  tag?: string | null;
  jobs: number;
  cost_micros: number;
}

const create = async (t: TestApp, tags?: string | string[], model = B1, headers: Record<string, string> = {}): Promise<JobJson> => {
  const res = await generate(t, model, MINIMAL[model], { ...headers, ...(tags === undefined ? {} : { [TAGS]: tags as string }) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<JobJson>();
};

describe('X-Mediagen-Tags on POST /generate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it.each([
    ['an empty header', '', 'X-Mediagen-Tags has an empty tag'],
    ['an empty item', 'team-a,,campaign-7', 'X-Mediagen-Tags has an empty tag'],
    ['a trailing comma', 'team-a,', 'X-Mediagen-Tags has an empty tag'],
    ['only spaces', '   ', 'X-Mediagen-Tags has an empty tag'],
    ['an uppercase letter', 'Team-a', "X-Mediagen-Tags: each tag must be 1 to 64 characters of a-z, 0-9, '_', '.', ':' and '-', got 'Team-a'"],
    ['a space inside a tag', 'team a', "got 'team a'"],
    ['a slash', 'team/a', "got 'team/a'"],
    ['a letter outside ASCII', 'équipe', "got 'équipe'"],
    ['a tag of 65 characters', 'a'.repeat(65), `got '${'a'.repeat(64)}...'`],
    ['nine tags', 'a,b,c,d,e,f,g,h,i', 'X-Mediagen-Tags must carry at most 8 tags, got 9'],
  ])('refuses %s with 400 naming the header, and creates nothing', async (_what, value, message) => {
    const before = (await get(t, '/jobs')).json<{ items: unknown[] }>().items.length;
    const res = await generate(t, B1, MINIMAL[B1], { [TAGS]: value });
    expect(errorOf(res, 400)).toContain(message);
    expect((await get(t, '/jobs')).json<{ items: unknown[] }>().items).toHaveLength(before);
  });

  it('takes spaces around tags, duplicates, 8 distinct tags of up to 64 characters, every allowed character, and two header lines as one list', async () => {
    expect((await create(t, ' team-a , campaign-7 ')).tags).toEqual(['campaign-7', 'team-a']);
    expect((await create(t, 'b,a,b,a')).tags).toEqual(['a', 'b']);
    const eight = ['h', 'g', 'f', 'e', 'd', 'c', 'b', 'a'];
    expect((await create(t, [...eight, 'a', 'b'].join(','))).tags).toEqual([...eight].reverse());
    expect((await create(t, `${'z'.repeat(64)},x_y.z:0-9`)).tags).toEqual(['x_y.z:0-9', 'z'.repeat(64)]);
    expect((await create(t, ['team-a', 'campaign-7,team-a'])).tags).toEqual(['campaign-7', 'team-a']);
  });

  it('is checked after the body: a bad body with bad tags names the body', async () => {
    const res = await generate(t, B1, { prompt: 1 }, { [TAGS]: 'BAD' });
    expect(errorOf(res, 400)).not.toContain('X-Mediagen-Tags');
  });
});

describe.each(backends)('job tags on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it("stores a create's tags with the job: in the creation answer, GET /jobs/{id}, the list and the details, sorted; absent without tags", async () => {
    t = await createTestApp({ backend });
    const tagged = await create(t, 'team-a,campaign-7', B1, { 'x-webhook-url': 'https://receiver.example/hook' });
    const plain = await create(t);
    expect(tagged.tags).toEqual(['campaign-7', 'team-a']);
    expect(plain).not.toHaveProperty('tags');
    expect((await get(t, `/jobs/${tagged.job_id}`)).json<JobJson>().tags).toEqual(['campaign-7', 'team-a']);
    expect((await get(t, `/jobs/${plain.job_id}`)).json()).not.toHaveProperty('tags');
    const listed = (await get(t, '/jobs')).json<{ items: JobJson[] }>().items;
    expect(listed.map((j) => [j.job_id, j.tags])).toEqual([
      [plain.job_id, undefined],
      [tagged.job_id, ['campaign-7', 'team-a']],
    ]);
    const details = await get(t, `/jobs/${tagged.job_id}/details`);
    expect(details.statusCode, details.body).toBe(200);
    expect(details.json<{ job: JobJson }>().job.tags).toEqual(['campaign-7', 'team-a']);
    // The job keeps them to its end, and its webhook event carries them.
    await runNextJob(t.services.runs, 'completed');
    expect((await get(t, `/jobs/${tagged.job_id}`)).json<JobJson>()).toMatchObject({ status: 'completed', tags: ['campaign-7', 'team-a'] });
    const now = msToMicros(t.clock.nowMs()) + 1_000_000;
    const [event] = await t.store.webhooks.claimDue(now, now + 60_000_000, 10);
    expect(event?.payload).toMatchObject({ job_id: tagged.job_id, status: 'completed', tags: ['campaign-7', 'team-a'] });
  });

  it('GET /jobs?tag= lists only the jobs carrying the tag, newest first, paged without skipping or repeating, with the other filters', async () => {
    t = await createTestApp({ backend });
    const made: JobJson[] = [];
    // The clock stands still: every job is created in the same millisecond.
    for (let i = 0; i < 12; i++) made.push(await create(t, i % 3 === 0 ? 'team-a' : i % 3 === 1 ? 'team-a,team-b' : undefined));
    const video = await create(t, 'team-b', F);
    const ids = (jobs: JobJson[]) => jobs.map((j) => j.job_id);
    const withTag = (tag: string) => made.filter((j) => j.tags?.includes(tag)).reverse();

    const a = await walkPages<JobJson>(t, '/jobs?tag=team-a&limit=3');
    expect(a.pages).toBe(3);
    expect(ids(a.items)).toEqual(ids(withTag('team-a')));
    expect(ids((await walkPages<JobJson>(t, '/jobs?tag=team-b&limit=2')).items)).toEqual([video.job_id, ...ids(withTag('team-b'))]);
    expect(ids((await walkPages<JobJson>(t, `/jobs?tag=team-b&types=${encodeURIComponent(F)}&limit=10`)).items)).toEqual([video.job_id]);
    expect((await get(t, '/jobs?tag=team-b&status=completed')).json<{ items: unknown[] }>().items).toEqual([]);
    expect((await get(t, '/jobs?tag=nobody')).json()).toEqual({ items: [], next_cursor: null });

    // A window on the creation time pages within the tag too.
    await runNextJob(t.services.runs, 'completed');
    t.clock.advance(1000);
    const later = await create(t, 'team-a');
    const start = encodeURIComponent(new Date(t.clock.nowMs()).toISOString());
    expect(ids((await get(t, `/jobs?tag=team-a&start=${start}`)).json<{ items: JobJson[] }>().items)).toEqual([later.job_id]);
    const done = (await get(t, '/jobs?tag=team-a&status=completed')).json<{ items: JobJson[] }>().items;
    expect(done.map((j) => [j.job_id, j.tags])).toEqual([[made[0]!.job_id, ['team-a']]]);

    // Another workspace's tags are its own.
    const other = await t.newWorkspace('other');
    expect((await get(t, '/jobs?tag=team-a', other.token)).json<{ items: unknown[] }>().items).toEqual([]);
  });

  it('GET /jobs refuses a malformed or repeated tag with 400 naming the parameter', async () => {
    t = await createTestApp({ backend });
    expect(errorOf(await get(t, '/jobs?tag=Team-A'), 400)).toBe(
      "query parameter 'tag' must be 1 to 64 characters of a-z, 0-9, '_', '.', ':' and '-', got 'Team-A'",
    );
    expect(errorOf(await get(t, '/jobs?tag='), 400)).toContain("query parameter 'tag' must be 1 to 64 characters");
    expect(errorOf(await get(t, '/jobs?tag=a&tag=b'), 400)).toBe("query parameter 'tag' must be given at most once");
  });

  it('GET /usage/summary?group_by=tag sums each tag (a job under each of its tags, the untagged under null) with the total counted once; by day and model too; members may ask', async () => {
    t = await createTestApp({ backend, now: '2026-11-20T10:00:00Z' });
    const charged = async (tags?: string) => {
      const job = await create(t, tags);
      const { ended } = await runNextJob(t.services.runs, 'completed');
      expect(ended?.id).toBe(job.job_id);
      return job.job_id;
    };
    const j1 = await charged('team-a');
    const j2 = await charged('team-a,campaign-7');
    t.clock.advance(86_400_000);
    const j3 = await charged('campaign-7');
    const j4 = await charged();
    const cost = new Map((await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.kind === 'charge').map((e) => [e.jobId!, e.amountMicros]));
    const sum = (...ids: string[]) => ids.reduce((s, id) => s + cost.get(id)!, 0);
    const row = (g: Group) => [g.day, g.model, g.tag, g.jobs, g.cost_micros];
    const summary = async (query: string, token?: string) => {
      const res = await get(t, `/usage/summary?start=2026-11-01T00:00:00Z&${query}`, token);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ total: { jobs: number; cost_micros: number }; groups: Group[] }>();
    };

    const byTag = await summary('group_by=tag');
    expect(byTag.total).toMatchObject({ jobs: 4, cost_micros: sum(j1, j2, j3, j4) });
    expect(byTag.groups.map(row)).toEqual([
      [undefined, undefined, 'campaign-7', 2, sum(j2, j3)],
      [undefined, undefined, 'team-a', 2, sum(j1, j2)],
      [undefined, undefined, null, 1, sum(j4)],
    ]);
    // The groups add up to more than the total: j2 is in two.
    expect(byTag.groups.reduce((s, g) => s + g.jobs, 0)).toBe(5);

    const byDay = await summary('group_by=day,tag');
    expect(byDay.total).toEqual(byTag.total);
    expect(byDay.groups.map(row)).toEqual([
      ['2026-11-20', undefined, 'campaign-7', 1, sum(j2)],
      ['2026-11-20', undefined, 'team-a', 2, sum(j1, j2)],
      ['2026-11-21', undefined, 'campaign-7', 1, sum(j3)],
      ['2026-11-21', undefined, null, 1, sum(j4)],
    ]);
    expect((await summary('group_by=tag&group_by=model')).groups.map(row)).toEqual([
      [undefined, B1, 'campaign-7', 2, sum(j2, j3)],
      [undefined, B1, 'team-a', 2, sum(j1, j2)],
      [undefined, B1, null, 1, sum(j4)],
    ]);
    // Tags are the callers' own data: a member sums them as the owner does.
    expect(await summary('group_by=tag', await memberToken(t, 'bob@example.com', 'member'))).toEqual(byTag);
  });

  it('an Idempotency-Key sent again with other tags is another request (422); with the same tags in another order it replays the job', async () => {
    t = await createTestApp({ backend });
    const key = { 'idempotency-key': 'tags-1' };
    const first = await create(t, 'team-a,campaign-7', B1, key);
    const again = await generate(t, B1, MINIMAL[B1], { ...key, [TAGS]: 'campaign-7, team-a,team-a' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json<JobJson>().job_id).toBe(first.job_id);
    for (const other of [{ [TAGS]: 'team-a' }, {}] as Record<string, string>[]) {
      const res = await generate(t, B1, MINIMAL[B1], { ...key, ...other });
      expect(errorOf(res, 422)).toContain('X-Mediagen-Tags');
    }
    expect((await get(t, '/jobs')).json<{ items: unknown[] }>().items).toHaveLength(1);
  });

  it("a deleted job's tags go with it, by DELETE and by the retention janitor: its charge then counts as untagged", async () => {
    t = await createTestApp({ backend, now: '2026-11-20T10:00:00Z' });
    const old = await create(t, 'team-a');
    await runNextJob(t.services.runs, 'completed');
    const deleted = await create(t, 'team-a');
    await runNextJob(t.services.runs, 'completed');
    const pruned = await create(t, 'team-a,team-b');
    await runNextJob(t.services.runs, 'completed');
    const tags = async () =>
      (await get(t, '/usage/summary?start=2026-11-01T00:00:00Z&group_by=tag')).json<{ groups: Group[] }>().groups.map((g) => [g.tag, g.jobs]);
    expect(await tags()).toEqual([
      ['team-a', 3],
      ['team-b', 1],
    ]);

    expect((await del(t, `/jobs/${deleted.job_id}`)).statusCode).toBe(200);
    expect(await tags()).toEqual([
      ['team-a', 2],
      ['team-b', 1],
      [null, 1],
    ]);
    // The janitor deletes the jobs that ended before its cutoff (job_retention_days ago); a job not ended stays.
    // (A charge's time, and so its job's end, may be a few microseconds past the clock's.)
    t.clock.advance(1);
    const cutoff = msToMicros(t.clock.nowMs());
    await create(t, 'team-b');
    expect((await t.store.retention.deleteJobs(cutoff, 500)).rows).toBe(2);
    expect(await tags()).toEqual([[null, 3]]);
    expect((await get(t, `/jobs/${old.job_id}`)).statusCode).toBe(404);
    expect((await get(t, `/jobs/${pruned.job_id}`)).statusCode).toBe(404);
    // The job that was not finished stays, tags and all.
    expect((await get(t, '/jobs?tag=team-b')).json<{ items: JobJson[] }>().items.map((j) => j.tags)).toEqual([['team-b']]);
  });
});
