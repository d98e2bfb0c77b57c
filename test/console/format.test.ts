import { describe, expect, it } from 'vitest';
import { elapsed, localMidnight, usd } from '../../console/src/lib/format.js';

/** How the console writes the API's amounts and times (console/src/lib/format.ts), in Node. */
describe('console formats', () => {
  it('writes every API amount exactly, never rounded to the cent', () => {
    expect(usd('0.040400')).toBe('$0.0404');
    // Rounded to the cent this would read $0.01, below the price charged.
    expect(usd('0.015000')).toBe('$0.015');
    expect(usd('9.959600')).toBe('$9.9596');
    expect(usd('10.000000')).toBe('$10.00');
    expect(usd('0.000001')).toBe('$0.000001');
    expect(usd('1234.5')).toBe('$1,234.50');
    // An available balance below zero (holds above the balance) keeps its sign.
    expect(usd('-0.500000')).toBe('-$0.50');
  });

  it('writes no amount as a dash and text that is no amount as it came', () => {
    expect(usd(null)).toBe('—');
    expect(usd(undefined)).toBe('—');
    expect(usd('')).toBe('');
    expect(usd('1e3')).toBe('1e3');
    expect(usd('0.1234567')).toBe('0.1234567');
    expect(usd('--1')).toBe('--1');
  });

  it('writes a duration rounded once, so its seconds never read 60', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
    const from = at(0);
    expect(elapsed(from, at(4.2))).toBe('4.2 s');
    expect(elapsed(from, at(9.96))).toBe('10 s');
    expect(elapsed(from, at(59.6))).toBe('1 min 0 s');
    expect(elapsed(from, at(179.6))).toBe('3 min 0 s');
    expect(elapsed(from, at(185))).toBe('3 min 5 s');
    expect(elapsed(at(5), from)).toBe('');
  });

  it('reads a YYYY-MM-DD day only when the calendar has it', () => {
    expect(localMidnight('2026-02-28')?.getDate()).toBe(28);
    expect(localMidnight('2028-02-29')?.getMonth()).toBe(1);
    expect(localMidnight('2026-02-29')).toBeUndefined();
    expect(localMidnight('2026-02-31')).toBeUndefined();
    expect(localMidnight('2026-13-01')).toBeUndefined();
    expect(localMidnight('2026-1-1')).toBeUndefined();
    expect(localMidnight('')).toBeUndefined();
    // A day later, across the month's end.
    expect(localMidnight('2026-01-31', 1)?.getMonth()).toBe(1);
  });
});
