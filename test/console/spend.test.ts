import { describe, expect, it } from 'vitest';
import { formatMicros, toMicros } from '../../console/src/lib/format.js';
import { daysBetween, summarize, windowOf } from '../../console/src/lib/spend.js';

/** The Usage page's arithmetic: the API's six-decimal amounts summed as integers, by local day and model. */
describe('console spend summary', () => {
  it('reads six-decimal USD amounts as whole micro-USD, without floating point', () => {
    expect(toMicros('0.030000')).toBe(30_000);
    expect(toMicros('12.5')).toBe(12_500_000);
    expect(toMicros('0.000001')).toBe(1);
    // 0.1 + 0.2 in floats is 0.30000000000000004; in micros it is exact.
    expect(toMicros('0.100000') + toMicros('0.200000')).toBe(toMicros('0.300000'));
    expect(() => toMicros('-1.00')).toThrow(/not a USD amount/);
    expect(() => toMicros('1e3')).toThrow(/not a USD amount/);
    // Past 2^53 micro-USD a number would drop digits: refused rather than misread.
    expect(() => toMicros('1000000000.000000')).toThrow(/not a USD amount/);
  });

  it('writes amounts as dollars and cents, keeping sub-cent micro-dollars', () => {
    expect(formatMicros(30_000)).toBe('$0.03');
    expect(formatMicros(1_500)).toBe('$0.0015');
    expect(formatMicros(1_234_567_890)).toBe('$1,234.56789');
    expect(formatMicros(0)).toBe('$0.00');
    expect(formatMicros(-250_000)).toBe('-$0.25');
    expect(() => formatMicros(0.5)).toThrow(/micro-USD/);
  });

  it('lists every day of the range and a window from the first midnight to the midnight after the last day', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    const w = windowOf('2026-11-01', '2026-11-01');
    expect(Date.parse(w.end) - Date.parse(w.start)).toBe(24 * 3600 * 1000);
    expect(new Date(w.start).getHours()).toBe(0);
    // A day that is not one is refused, not rolled over into the next month.
    expect(() => windowOf('2026-02-31', '2026-03-01')).toThrow(/not a range of days/);
  });

  it('sums spend by local day and by model, models by spend, leaving out what falls outside the range', () => {
    const at = (day: string, h: number) => new Date(`${day}T${String(h).padStart(2, '0')}:30:00`).toISOString();
    const spend = summarize(
      [
        { type: 'image/a', completed_at: at('2026-11-01', 9), cost_usd: '0.030000' },
        { type: 'image/a', completed_at: at('2026-11-01', 23), cost_usd: '0.030000' },
        { type: 'video/b', completed_at: at('2026-11-03', 0), cost_usd: '0.500000' },
        { type: 'image/a', completed_at: at('2026-11-05', 12), cost_usd: '9.000000' },
      ],
      '2026-11-01',
      '2026-11-03',
    );
    expect(spend.days).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(spend.models).toEqual([
      { model: 'video/b', jobs: 1, micros: 500_000 },
      { model: 'image/a', jobs: 2, micros: 60_000 },
    ]);
    expect(spend.byDay.get('image/a')).toEqual([60_000, 0, 0]);
    expect(spend.byDay.get('video/b')).toEqual([0, 0, 500_000]);
    expect(spend.totalMicros).toBe(560_000);
    expect(spend.jobs).toBe(3);
  });
});
