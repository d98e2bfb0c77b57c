/**
 * Spend over a date range, from GET /usage/summary: totals by local day and by model, in integer
 * micro-USD (the server's `cost_micros`), summed by the server whatever the number of jobs. Pure,
 * so a unit test runs it in Node.
 */
import { localDay, localMidnight } from './format.js';

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

/** The window GET /usage and GET /usage/summary take for local days `from`..`to`: start at from's midnight, end at the midnight after `to`. */
export function windowOf(from: string, to: string): { start: string; end: string } {
  const start = localMidnight(from);
  const end = localMidnight(to, 1);
  if (!start || !end) throw new Error(`not a range of days: ${from} to ${to}`);
  return { start: start.toISOString(), end: end.toISOString() };
}

/** One `GET /usage/summary` the page asks for: a stretch of days with one UTC offset, or one day whose offset changes. */
export interface SummaryRequest {
  readonly start: string;
  readonly end: string;
  /** Days of one offset are summed by day and model; a day the offset changes in, by model only, all of it that day. */
  readonly group_by: 'day,model' | 'model';
  /** Where the server's days start (`+01:00`): the browser's offset over the whole stretch. */
  readonly utc_offset?: string;
  /** The local day a `model`-only request covers. */
  readonly day?: string;
}

/** The sums of one group of `GET /usage/summary` the page reads. */
export interface SummaryGroup {
  readonly day?: string;
  readonly model?: string;
  readonly jobs: number;
  readonly cost_micros: number;
}

/** The browser's offset from UTC at `d`, in minutes east. */
export const localOffset = (d: Date): number => -d.getTimezoneOffset();

/** Minutes east of UTC as the API's `utc_offset` writes them: `+01:00`, `-05:30`. */
export function formatOffset(minutes: number): string {
  const a = Math.abs(minutes);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${minutes < 0 ? '-' : '+'}${p(Math.floor(a / 60))}:${p(a % 60)}`;
}

/**
 * The summaries that give local days `from`..`to` exactly: the server sums days of one fixed
 * offset, so the range is cut where the browser's offset changes (daylight saving). Days that
 * start and end in one offset go in stretches (one request each, by day and model); a day the
 * offset changes in is asked alone, from its midnight to the next, by model. Most ranges are
 * one request, a range over a change three.
 */
export function summaryRequests(from: string, to: string, offsetAt: (d: Date) => number = localOffset): SummaryRequest[] {
  const days = daysBetween(from, to);
  const out: SummaryRequest[] = [];
  let run: { start: Date; end: Date; offset: number } | undefined;
  const flush = () => {
    if (run) out.push({ start: run.start.toISOString(), end: run.end.toISOString(), group_by: 'day,model', utc_offset: formatOffset(run.offset) });
    run = undefined;
  };
  for (const day of days) {
    const start = localMidnight(day)!;
    const end = localMidnight(day, 1)!;
    const offset = offsetAt(start);
    if (offset !== offsetAt(end)) {
      flush();
      out.push({ start: start.toISOString(), end: end.toISOString(), group_by: 'model', day });
    } else if (run && run.offset === offset) {
      run.end = end;
    } else {
      flush();
      run = { start, end, offset };
    }
  }
  flush();
  return out;
}

/** The page's spend from the answers to `summaryRequests(from, to)`, in the same order. */
export function spendOfSummaries(from: string, to: string, answers: readonly { request: SummaryRequest; groups: readonly SummaryGroup[] }[]): Spend {
  const days = daysBetween(from, to);
  const index = new Map(days.map((d, i) => [d, i]));
  const byDay = new Map<string, number[]>();
  const totals = new Map<string, { jobs: number; micros: number }>();
  let totalMicros = 0;
  let jobs = 0;
  for (const { request, groups } of answers) {
    for (const g of groups) {
      const i = index.get(request.day ?? g.day ?? '');
      if (i === undefined || g.model === undefined) continue;
      const row = byDay.get(g.model) ?? days.map(() => 0);
      row[i]! += g.cost_micros;
      byDay.set(g.model, row);
      const t = totals.get(g.model) ?? { jobs: 0, micros: 0 };
      totals.set(g.model, { jobs: t.jobs + g.jobs, micros: t.micros + g.cost_micros });
      totalMicros += g.cost_micros;
      jobs += g.jobs;
    }
  }
  const models = [...totals].map(([model, t]) => ({ model, ...t })).sort((a, b) => b.micros - a.micros || a.model.localeCompare(b.model));
  return { days, models, byDay, totalMicros, jobs };
}
