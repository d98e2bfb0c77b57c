import { FROM_AFTER_TO, localDay, localMidnight } from '../../lib/format.js';

/**
 * The Usage page's date range as it lives in the URL (`usage?from=YYYY-MM-DD&to=YYYY-MM-DD`, local
 * days, both included). Pure, so test/console/usage-range.test.ts runs it in Node.
 *
 * The URL keeps what the From and To fields hold even when it is no range (a cleared field, a day
 * after the other, a day that does not exist): the fields then still show what was typed, and the
 * page says why there is no report instead of quietly showing another range than the fields do.
 */

/** The range when the URL names none: the last 30 days, today included. */
export const DEFAULT_DAYS = 30;

export type UsageRange =
  /** A range to report on. */
  | { readonly ok: true; readonly from: string; readonly to: string }
  /** What the fields hold (as typed, '' when cleared) and why it is no range. */
  | { readonly ok: false; readonly from: string; readonly to: string; readonly problem: string };

/** The range of the last `days` days up to `today`, today included. */
export function lastDays(today: Date, days: number): { from: string; to: string } {
  return { from: localDay(new Date(today.getFullYear(), today.getMonth(), today.getDate() - (days - 1))), to: localDay(today) };
}

/** The range a URL's query names, or why it names none; no `from` and `to` at all is the default range. */
export function usageRange(query: URLSearchParams, today: Date): UsageRange {
  const from = query.get('from');
  const to = query.get('to');
  if (from === null && to === null) return { ok: true, ...lastDays(today, DEFAULT_DAYS) };
  const f = from ?? '';
  const t = to ?? '';
  const problem = rangeProblem(f, t);
  return problem ? { ok: false, from: f, to: t, problem } : { ok: true, from: f, to: t };
}

/** Why `from`..`to` is no range of days, if it is not. */
export function rangeProblem(from: string, to: string): string | undefined {
  if (from === '' || to === '') return 'Choose both a “From” and a “To” day to see the spend between them.';
  if (!localMidnight(from)) return `“${from}” is not a day of the calendar: choose the “From” day again.`;
  if (!localMidnight(to)) return `“${to}” is not a day of the calendar: choose the “To” day again.`;
  if (from > to) return FROM_AFTER_TO;
  return undefined;
}

/** The console path of the Usage page for what the fields hold. */
export function usagePath(from: string, to: string): string {
  return `usage?${new URLSearchParams({ from, to }).toString()}`;
}
