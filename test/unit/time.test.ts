import { describe, expect, it } from 'vitest';
import { formatHttpDate, formatMicros, parseDateOnly, parseIsoMicros } from '../../src/lib/time.js';

describe('time', () => {
  it('formats microseconds as ISO 8601 UTC with six fractional digits', () => {
    expect(formatMicros(Date.UTC(2026, 10, 22, 6, 24, 51, 123) * 1000 + 456)).toBe('2026-11-22T06:24:51.123456Z');
    expect(formatMicros(0)).toBe('1970-01-01T00:00:00.000000Z');
  });

  it('parses what it formats back to the same microsecond', () => {
    for (const us of [0, 1, 999, 1_795_000_000_123_456, 1_795_000_000_000_001]) {
      expect(parseIsoMicros(formatMicros(us))).toBe(us);
    }
  });

  it('parses offsets, missing fractions and more than six fractional digits', () => {
    const base = Date.UTC(2026, 0, 1, 12) * 1000;
    expect(parseIsoMicros('2026-01-01T12:00:00Z')).toBe(base);
    expect(parseIsoMicros('2026-01-01T13:00:00+01:00')).toBe(base);
    expect(parseIsoMicros('2026-01-01T11:30:00-00:30')).toBe(base);
    expect(parseIsoMicros('2026-01-01T12:00:00.1234560Z')).toBe(base + 123456);
    expect(parseIsoMicros('2026-01-01T12:00:00.123456000Z')).toBe(base + 123456);
  });

  it('rounds digits past the microsecond up, so an earlier stored time stays before the cursor', () => {
    const base = Date.UTC(2026, 0, 1, 12) * 1000;
    expect(parseIsoMicros('2026-01-01T12:00:00.1234561Z')).toBe(base + 123457);
    expect(parseIsoMicros('2026-01-01T12:00:00.000000001Z')).toBe(base + 1);
  });

  it('reads a leap second as the start of the next second', () => {
    expect(parseIsoMicros('2016-12-31T23:59:60Z')).toBe(Date.UTC(2017, 0, 1) * 1000);
  });

  it.each(['2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:61Z', '2026-01-01', '2026-01-01T00:00:00', 'yesterday', ''])(
    'rejects %j',
    (text) => {
      expect(parseIsoMicros(text)).toBeUndefined();
    },
  );

  it('reads calendar dates as the start of the UTC day and rejects impossible ones', () => {
    expect(parseDateOnly('2026-06-19')).toBe(Date.UTC(2026, 5, 19));
    expect(parseDateOnly('2026-06-31')).toBeUndefined();
    expect(parseDateOnly('2026-6-1')).toBeUndefined();
  });

  it('formats HTTP dates as RFC 1123', () => {
    expect(formatHttpDate(Date.UTC(2027, 0, 1))).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
  });
});
