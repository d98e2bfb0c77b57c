import { describe, expect, it } from 'vitest';
import { formatMicros, localMidnight, toMicros } from '../../console/src/lib/format.js';
import { daysBetween, formatOffset, spendOfSummaries, summaryRequests, windowOf } from '../../console/src/lib/spend.js';

/** The Usage page's arithmetic: which summaries it asks for, and their integer sums put together by local day and model. */
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

  it('asks one summary by day and model for a range of one UTC offset, in that offset', () => {
    const reqs = summaryRequests('2026-11-01', '2026-11-30', () => 60);
    expect(reqs).toEqual([{ ...windowOf('2026-11-01', '2026-11-30'), group_by: 'day,model', utc_offset: '+01:00' }]);
    expect(formatOffset(-330)).toBe('-05:30');
    expect(formatOffset(0)).toBe('+00:00');
    expect(formatOffset(345)).toBe('+05:45');
  });

  it('cuts a range where the offset changes: the day of the change alone, by model, the stretches either side in their own offset', () => {
    // An offset of +02:00 until 2026-10-25 01:00 UTC, +01:00 after (central Europe's autumn change),
    // seen from this process's own midnights.
    const change = localMidnight('2026-10-25')!.getTime() + 3 * 3600_000;
    const offsetAt = (d: Date) => (d.getTime() < change ? 120 : 60);
    const reqs = summaryRequests('2026-10-20', '2026-10-31', offsetAt);
    expect(reqs).toEqual([
      { ...windowOf('2026-10-20', '2026-10-24'), group_by: 'day,model', utc_offset: '+02:00' },
      { ...windowOf('2026-10-25', '2026-10-25'), group_by: 'model', day: '2026-10-25' },
      { ...windowOf('2026-10-26', '2026-10-31'), group_by: 'day,model', utc_offset: '+01:00' },
    ]);
    // The windows tile the range: no instant is asked twice or left out.
    for (let i = 1; i < reqs.length; i++) expect(reqs[i]!.start).toBe(reqs[i - 1]!.end);
  });

  it('puts the summaries together by local day and by model, models by spend, in integer micro-USD', () => {
    const [stretch, changeDay] = [
      { start: '', end: '', group_by: 'day,model' as const, utc_offset: '+01:00' },
      { start: '', end: '', group_by: 'model' as const, day: '2026-11-03' },
    ];
    const spend = spendOfSummaries('2026-11-01', '2026-11-03', [
      {
        request: stretch,
        groups: [
          { day: '2026-11-01', model: 'image/a', jobs: 2, cost_micros: 60_000 },
          { day: '2026-11-02', model: 'image/a', jobs: 1, cost_micros: 1 },
          // Outside the range: left out.
          { day: '2026-11-05', model: 'image/a', jobs: 1, cost_micros: 9_000_000 },
        ],
      },
      { request: changeDay, groups: [{ model: 'video/b', jobs: 50_001, cost_micros: 500_000 }] },
    ]);
    expect(spend.days).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(spend.models).toEqual([
      { model: 'video/b', jobs: 50_001, micros: 500_000 },
      { model: 'image/a', jobs: 3, micros: 60_001 },
    ]);
    expect(spend.byDay.get('image/a')).toEqual([60_000, 1, 0]);
    expect(spend.byDay.get('video/b')).toEqual([0, 0, 500_000]);
    expect(spend.totalMicros).toBe(560_001);
    expect(spend.jobs).toBe(50_004);
  });
});
