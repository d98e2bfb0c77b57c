import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import type { LedgerEntry } from '../../src/store/billing-store.js';

let t: TestApp;
afterEach(async () => t?.close());

interface Sums {
  jobs: number;
  cost_micros: number;
  cost_usd: string;
  compute_units: number;
}
interface Summary {
  total: Sums;
  groups: (Sums & { day?: string; model?: string })[];
}

const US_PER_HOUR = 3_600_000_000;
const T0 = Date.parse('2026-11-01T00:00:00Z') * 1000;
const MODELS = ['image/vendor-b/model-b-1', 'video/vendor-f/model-f', 'image/vendor-a/model-a-2/medium'];

const summary = async (query = '', token?: string): Promise<Summary> => {
  const res = await get(t, `/usage/summary${query}`, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Summary;
};

/**
 * Writes the ledger of `n` settled jobs straight through the store, spread over ten days of
 * November 2026 (every 7 hours, so days and offsets cut them differently), three models and
 * uneven amounts; some charged less than their hold (a release beside the charge), some released.
 */
async function seedLedger(n: number): Promise<void> {
  await t.store.billing.topUp({ workspaceId: t.workspaceId, amountMicros: 1_000_000_000_000, createdBy: 'test', now: T0 });
  for (let i = 0; i < n; i++) {
    const jobId = randomUUID();
    const at = T0 + i * 7 * US_PER_HOUR + i;
    const amount = 1_000 + ((i * 7_919) % 500_003);
    await t.store.billing.hold({ workspaceId: t.workspaceId, jobId, jobType: MODELS[i % 3]!, amountMicros: amount, now: at - 1000 });
    if (i % 5 === 4) await t.store.billing.release(jobId, at);
    else await t.store.billing.charge(jobId, at, i % 3 === 1 ? amount - 17 : undefined);
  }
}

/** The expected groups, summed from the ledger's own charge entries in JavaScript. */
function sumLedger(entries: LedgerEntry[], key: (e: LedgerEntry) => string, from: number, before: number): Map<string, { jobs: number; micros: number }> {
  const out = new Map<string, { jobs: number; micros: number }>();
  for (const e of entries) {
    if (e.kind !== 'charge' || e.at < from || e.at >= before) continue;
    const k = key(e);
    const s = out.get(k) ?? { jobs: 0, micros: 0 };
    out.set(k, { jobs: s.jobs + 1, micros: s.micros + e.amountMicros });
  }
  return out;
}

const dayOf = (at: number, offsetUs = 0) => new Date(Math.floor((at + offsetUs) / 1000)).toISOString().slice(0, 10);
const asGroups = (m: Map<string, { jobs: number; micros: number }>, split: (k: string) => Record<string, string>) =>
  [...m]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, s]) => ({ ...split(k), jobs: s.jobs, cost_micros: s.micros, cost_usd: expect.stringMatching(/^\d+\.\d{6}$/), compute_units: s.micros / 10_000 }));

describe.each(backends)('GET /usage/summary on $name', (backend) => {
  it('sums the ledger\'s charges in the window, in total, by day, by model and by both, in integer micro-USD', async () => {
    t = await createTestApp({ now: '2026-11-20T00:00:00Z', backend });
    await seedLedger(30);
    const entries = await t.store.billing.listEntries(t.workspaceId);
    const start = '2026-11-02T05:00:00Z';
    const end = '2026-11-08T00:00:00Z';
    const from = Date.parse(start) * 1000;
    const before = Date.parse(end) * 1000;
    const window = `?start=${start}&end=${end}`;

    const total = sumLedger(entries, () => '', from, before).get('')!;
    expect(total.jobs).toBeGreaterThan(10);
    const expectedTotal = { jobs: total.jobs, cost_micros: total.micros, cost_usd: (total.micros / 1e6).toFixed(6), compute_units: total.micros / 10_000 };
    expect(await summary(window)).toEqual({ total: expectedTotal, groups: [] });

    const byDay = await summary(`${window}&group_by=day`);
    expect(byDay.total).toEqual(expectedTotal);
    expect(byDay.groups).toEqual(asGroups(sumLedger(entries, (e) => dayOf(e.at), from, before), (day) => ({ day })));

    const byModel = await summary(`${window}&group_by=model`);
    expect(byModel.groups).toEqual(asGroups(sumLedger(entries, (e) => e.jobType!, from, before), (model) => ({ model })));

    const both = await summary(`${window}&group_by=model,day`);
    expect(both.total).toEqual(expectedTotal);
    const expectedBoth = asGroups(sumLedger(entries, (e) => `${dayOf(e.at)} ${e.jobType}`, from, before), (k) => ({ day: k.slice(0, 10), model: k.slice(11) }));
    expect(both.groups).toEqual(expectedBoth);
    expect(both.groups.reduce((s, g) => s + g.cost_micros, 0)).toBe(total.micros);
    // Repeating the parameter is the same as a list.
    expect(await summary(`${window}&group_by=day&group_by=model`)).toEqual(both);

    // Days in another offset: each charge on its local day.
    for (const [offset, us] of [['%2B05:30', 5.5 * US_PER_HOUR], ['-08:00', -8 * US_PER_HOUR]] as const) {
      const shifted = await summary(`${window}&group_by=day&utc_offset=${offset}`);
      expect(shifted.groups).toEqual(asGroups(sumLedger(entries, (e) => dayOf(e.at, us), from, before), (day) => ({ day })));
      expect(shifted.total).toEqual(expectedTotal);
    }
  });

  it('agrees with GET /usage read to its last page, by default over the last 30 days, and shows only the caller\'s workspace', async () => {
    t = await createTestApp({ now: '2026-11-20T00:00:00Z', backend });
    await seedLedger(24);
    let cursor: string | null = null;
    let micros = 0;
    let jobs = 0;
    do {
      const page = (await get(t, `/usage?limit=7${cursor ? `&cursor=${cursor}` : ''}`)).json() as { items: { cost_usd: string }[]; next_cursor: string | null };
      for (const item of page.items) micros += Math.round(Number(item.cost_usd) * 1e6);
      jobs += page.items.length;
      cursor = page.next_cursor;
    } while (cursor);
    expect((await summary()).total).toMatchObject({ jobs, cost_micros: micros });
    const other = await t.newWorkspace('other');
    expect(await summary('?group_by=day,model', other.token)).toEqual({ total: { jobs: 0, cost_micros: 0, cost_usd: '0.000000', compute_units: 0 }, groups: [] });
  });
});

describe('GET /usage/summary', () => {
  it.each([
    ['?group_by=week', "query parameter 'group_by' must be a comma-separated list of day, model, engine, tag, got 'week'"],
    ['?group_by=day,day', "query parameter 'group_by' must name each grouping at most once"],
    ['?group_by=day,model,engine,tag,day', "query parameter 'group_by' must have at most 4 items, got 5"],
    ['?group_by=', "query parameter 'group_by' must be a comma-separated list with no empty items"],
    ['?utc_offset=+01:00', "query parameter 'utc_offset' must be a UTC offset from -14:00 to +14:00 such as +02:00 or -05:30, got ' 01:00'; send the '+' as %2B"],
    ['?utc_offset=-15:00', "query parameter 'utc_offset' must be a UTC offset from -14:00 to +14:00"],
    ['?utc_offset=%2B01:60', "query parameter 'utc_offset' must be a UTC offset"],
    ['?utc_offset=1', "query parameter 'utc_offset' must be a UTC offset"],
    ['?start=yesterday', "query parameter 'start' must be an ISO 8601 date-time"],
    ['?start=2026-11-02T00:00:00Z&end=2026-11-01T00:00:00Z', "query parameter 'start' must not be later than 'end'"],
    ['?start=2000-01-01T00:00:00Z&group_by=day', "query parameter 'start' must be at most 3660 days before 'end' (or now) when grouping by day"],
    ['?limit=10', "unknown query parameter 'limit'; allowed: start, end, group_by, utc_offset"],
    ['?utc_offset=Z&utc_offset=Z', "query parameter 'utc_offset' must be given at most once"],
  ])('refuses %s with 400 naming the parameter', async (query, message) => {
    t = await createTestApp({ now: '2026-11-20T00:00:00Z' });
    expect(errorOf(await get(t, `/usage/summary${query}`), 400)).toContain(message);
  });

  it('takes a whole-history window without day grouping, and Z as UTC', async () => {
    t = await createTestApp({ now: '2026-11-20T00:00:00Z' });
    await seedLedger(3);
    expect((await summary('?start=2000-01-01T00:00:00Z&group_by=model')).total.jobs).toBe(3);
    expect(await summary('?start=2026-11-01T00:00:00Z&group_by=day&utc_offset=Z')).toEqual(await summary('?start=2026-11-01T00:00:00Z&group_by=day'));
  });

  it('requires a token, and is in the OpenAPI document', async () => {
    t = await createTestApp();
    errorOf(await t.app.inject({ method: 'GET', url: '/usage/summary' }), 401);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId: string; parameters?: { name: string }[] }>>;
    };
    const op = doc.paths['/usage/summary']?.get;
    expect(op?.operationId).toBe('summarizeUsage');
    expect(op?.parameters?.map((p) => p.name).sort()).toEqual(['end', 'group_by', 'start', 'utc_offset']);
  });
});
