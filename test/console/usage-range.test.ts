import { describe, expect, it } from 'vitest';
import { lastDays, usagePath, usageRange } from '../../console/src/pages/usage/range.js';

/** The Usage page's date range from its URL (console/src/pages/usage/range.ts), in Node. */
describe('console usage range', () => {
  const today = new Date(2026, 2, 15, 13, 30);
  const range = (q: string) => usageRange(new URLSearchParams(q), today);

  it('reports on the last 30 days when the URL names no range', () => {
    expect(range('')).toEqual({ ok: true, from: '2026-02-14', to: '2026-03-15' });
    expect(lastDays(today, 7)).toEqual({ from: '2026-03-09', to: '2026-03-15' });
  });

  it('reports on the range the URL names, one day included', () => {
    expect(range('from=2026-01-01&to=2026-01-31')).toEqual({ ok: true, from: '2026-01-01', to: '2026-01-31' });
    expect(range('from=2026-01-01&to=2026-01-01')).toEqual({ ok: true, from: '2026-01-01', to: '2026-01-01' });
  });

  it('says why there is no report for a day after the other, a cleared day or a day the calendar lacks, keeping what the fields hold', () => {
    expect(range('from=2026-03-10&to=2026-03-01')).toEqual({ ok: false, from: '2026-03-10', to: '2026-03-01', problem: expect.stringContaining('“From” day is after the “To” day') });
    expect(range('from=&to=2026-03-01')).toEqual({ ok: false, from: '', to: '2026-03-01', problem: expect.stringContaining('Choose both') });
    expect(range('to=2026-03-01')).toMatchObject({ ok: false, from: '' });
    expect(range('from=2026-02-31&to=2026-03-05')).toEqual({ ok: false, from: '2026-02-31', to: '2026-03-05', problem: expect.stringContaining('“2026-02-31” is not a day') });
    expect(range('from=2026-03-01&to=soon')).toMatchObject({ ok: false, problem: expect.stringContaining('“soon” is not a day') });
  });

  it('puts what the fields hold in the URL, a range or not', () => {
    expect(usagePath('2026-03-10', '')).toBe('usage?from=2026-03-10&to=');
    expect(usageRange(new URLSearchParams(usagePath('2026-03-10', '2026-03-01').split('?')[1]), today).ok).toBe(false);
  });
});
