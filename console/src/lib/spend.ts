/**
 * Spend over a date range, from the items of GET /usage: totals by local day and by model, in
 * integer micro-USD (the API's six-decimal amounts read without floating point). Pure, so a unit
 * test runs it in Node.
 */
import { localDay, localMidnight, toMicros } from './format.js';

export interface UsageRow {
  readonly type: string;
  readonly completed_at: string;
  readonly cost_usd: string;
}

export interface ModelSpend {
  readonly model: string;
  readonly jobs: number;
  readonly micros: number;
}

export interface Spend {
  /** Every day of the range, oldest first (YYYY-MM-DD, local time). */
  readonly days: readonly string[];
  /** Models by spend, largest first. */
  readonly models: readonly ModelSpend[];
  /** model -> one amount per day of `days`. */
  readonly byDay: ReadonlyMap<string, readonly number[]>;
  readonly totalMicros: number;
  readonly jobs: number;
}

/** The local days from `from` to `to`, both YYYY-MM-DD and included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const d = localMidnight(from);
  const end = localMidnight(to);
  while (d && end && d <= end && days.length <= 3660) {
    days.push(localDay(d));
    d.setDate(d.getDate() + 1);
  }
  return days;
}

/** The window GET /usage takes for local days `from`..`to`: start at from's midnight, end at the midnight after `to`. */
export function windowOf(from: string, to: string): { start: string; end: string } {
  const start = localMidnight(from);
  const end = localMidnight(to, 1);
  if (!start || !end) throw new Error(`not a range of days: ${from} to ${to}`);
  return { start: start.toISOString(), end: end.toISOString() };
}

export function summarize(items: Iterable<UsageRow>, from: string, to: string): Spend {
  const days = daysBetween(from, to);
  const index = new Map(days.map((d, i) => [d, i]));
  const byDay = new Map<string, number[]>();
  const totals = new Map<string, { jobs: number; micros: number }>();
  let totalMicros = 0;
  let jobs = 0;
  for (const item of items) {
    const i = index.get(localDay(new Date(item.completed_at)));
    if (i === undefined) continue;
    const micros = toMicros(item.cost_usd);
    const row = byDay.get(item.type) ?? days.map(() => 0);
    row[i]! += micros;
    byDay.set(item.type, row);
    const t = totals.get(item.type) ?? { jobs: 0, micros: 0 };
    totals.set(item.type, { jobs: t.jobs + 1, micros: t.micros + micros });
    totalMicros += micros;
    jobs += 1;
  }
  const models = [...totals].map(([model, t]) => ({ model, ...t })).sort((a, b) => b.micros - a.micros || a.model.localeCompare(b.model));
  return { days, models, byDay, totalMicros, jobs };
}
