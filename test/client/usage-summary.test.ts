import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { Mediagen, MediagenError } from '../../packages/client/src/index.js';
import type { UsageGroup, UsageSummary } from '../../packages/client/src/index.js';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { runNextJob } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';
const F = 'video/vendor-f/model-f';

/** The typed client's `usageSummary` (GET /usage/summary) over real HTTP, against the ledger. */
describe.each(backends)('the typed client: usage summary on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('sums the charged jobs by day and model, sends group_by as a list and a + offset intact, and a bad parameter is a MediagenError', async () => {
    t = await createTestApp({ backend, now: '2026-11-21T23:30:00Z' });
    const mg = new Mediagen({ baseUrl: await t.app.listen({ port: 0, host: '127.0.0.1' }), token: t.token, retry: false });
    for (const [model, advance] of [[B1, 0], [F, 0], [B1, 3_600_000]] as const) {
      t.clock.advance(advance);
      expect((await generate(t, model, { prompt: 'p' })).statusCode).toBe(200);
      await runNextJob(t.services.runs, 'completed');
    }
    const charges = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(3);
    const micros = (model: string) => charges.filter((e) => e.jobType === model).reduce((s, e) => s + e.amountMicros, 0);
    const all = charges.reduce((s, e) => s + e.amountMicros, 0);

    const summary = await mg.usageSummary({ group_by: ['model', 'day'], utc_offset: '+01:00' });
    expectTypeOf(summary).toEqualTypeOf<UsageSummary>();
    expectTypeOf(summary.groups).toEqualTypeOf<UsageGroup[]>();
    expect(summary.total).toMatchObject({ jobs: 3, cost_micros: all });
    // 23:30 UTC is 00:30 the next day at +01:00; the third job an hour later.
    expect(summary.groups.map((g) => [g.day, g.model, g.jobs, g.cost_micros])).toEqual([
      ['2026-11-22', B1, 2, micros(B1)],
      ['2026-11-22', F, 1, micros(F)],
    ]);
    expect((await mg.usageSummary({ group_by: 'day' })).groups.map((g) => [g.day, g.jobs])).toEqual([
      ['2026-11-21', 2],
      ['2026-11-22', 1],
    ]);
    expect((await mg.usageSummary()).groups).toEqual([]);

    const err = await mg.usageSummary({ utc_offset: '+15:00' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect((err as MediagenError).status).toBe(400);
    expect((err as MediagenError).message).toContain("query parameter 'utc_offset'");
  });
});
