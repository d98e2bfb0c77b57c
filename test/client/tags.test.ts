import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { Mediagen, MediagenError } from '../../packages/client/src/index.js';
import type { UsageGrouping } from '../../packages/client/src/index.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';

/** The typed client's `tags` (X-Mediagen-Tags), `jobs.list({ tag })` and `usageSummary` by tag, over real HTTP. */
describe.each(backends)('the typed client: tags on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('sends tags on generate, lists by tag, sums by tag; no header for an empty list; a bad tag is a 400 MediagenError naming the header', async () => {
    t = await createTestApp({ backend, now: '2026-11-21T12:00:00Z' });
    const mg = new Mediagen({ baseUrl: await t.app.listen({ port: 0, host: '127.0.0.1' }), token: t.token, retry: false });
    const tagged = await mg.generate(B1, { prompt: 'a fox' }, { tags: ['team-a', 'campaign-7'] });
    expect(tagged.tags).toEqual(['campaign-7', 'team-a']);
    expectTypeOf(tagged.tags).toEqualTypeOf<string[] | undefined>();
    const plain = await mg.generate(B1, { prompt: 'a fox' }, { tags: [] });
    expect(plain).not.toHaveProperty('tags');
    for (let i = 0; i < 2; i++) await runNextJob(t.services.runs, 'completed');

    expect((await mg.jobs.list({ tag: 'team-a' })).items.map((j) => j.job_id)).toEqual([tagged.job_id]);
    const seen: string[] = [];
    for await (const job of mg.jobs.iterate({ tag: 'campaign-7', limit: 1 })) seen.push(job.job_id);
    expect(seen).toEqual([tagged.job_id]);
    expect((await mg.jobs.details(tagged.job_id)).job.tags).toEqual(['campaign-7', 'team-a']);

    const grouping: UsageGrouping = 'tag';
    const summary = await mg.usageSummary({ group_by: [grouping] });
    expect(summary.total.jobs).toBe(2);
    expect(summary.groups.map((g) => [g.tag, g.jobs])).toEqual([
      ['campaign-7', 1],
      ['team-a', 1],
      [null, 1],
    ]);
    expect((await mg.usageSummary({ group_by: 'day,tag' })).groups.map((g) => [g.day, g.tag])).toEqual([
      ['2026-11-21', 'campaign-7'],
      ['2026-11-21', 'team-a'],
      ['2026-11-21', null],
    ]);

    const err = await mg.generate(B1, { prompt: 'a fox' }, { tags: ['Team-A'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect((err as MediagenError).status).toBe(400);
    expect((err as MediagenError).message).toContain('X-Mediagen-Tags');
  });
});
