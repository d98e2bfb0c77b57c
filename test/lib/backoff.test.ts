import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAX_ATTEMPTS,
  MAX_RETRY_DELAY_MS,
  RETRY_DELAYS_MS,
  RETRY_JITTER,
  backoffMs,
  parseRetryAfter,
  retryDelayMs,
  withRetryAfter,
} from '../../src/lib/backoff.js';

const HOUR = 3_600_000;
const middle = () => 0.5;

/** Every wait of a delivery that never succeeds, for a given random source. */
function schedule(random: () => number): number[] {
  const out: number[] = [];
  for (let n = 1; ; n++) {
    const d = retryDelayMs(n, random);
    if (d === undefined) return out;
    out.push(d);
  }
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('retryDelayMs', () => {
  it('starts at 5 s, never shrinks before jitter, and is capped at 12 h', () => {
    expect(RETRY_DELAYS_MS[0]).toBe(5_000);
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) expect(RETRY_DELAYS_MS[i]!).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i - 1]!);
    expect(Math.max(...RETRY_DELAYS_MS)).toBe(MAX_RETRY_DELAY_MS);
    expect(MAX_RETRY_DELAY_MS).toBe(12 * HOUR);
  });

  it('makes 15 attempts in all, then gives up', () => {
    expect(MAX_ATTEMPTS).toBe(15);
    expect(schedule(middle)).toHaveLength(MAX_ATTEMPTS - 1);
    expect(retryDelayMs(MAX_ATTEMPTS - 1, middle)).toBe(12 * HOUR);
    expect(retryDelayMs(MAX_ATTEMPTS, middle)).toBeUndefined();
    expect(retryDelayMs(100, middle)).toBeUndefined();
  });

  it('gives the nominal delay at random = 0.5 and stays within ±20%, and the cap, at the ends', () => {
    expect(RETRY_JITTER).toBe(0.2);
    expect(schedule(middle)).toEqual(RETRY_DELAYS_MS);
    RETRY_DELAYS_MS.forEach((nominal, i) => {
      const low = retryDelayMs(i + 1, () => 0)!;
      const high = retryDelayMs(i + 1, () => 1)!;
      expect(low).toBe(Math.round(nominal * 0.8));
      expect(high).toBe(Math.min(MAX_RETRY_DELAY_MS, Math.round(nominal * 1.2)));
      for (const r of [0.01, 0.3, 0.77, 0.999]) {
        const d = retryDelayMs(i + 1, () => r)!;
        expect(d).toBeGreaterThanOrEqual(low);
        expect(d).toBeLessThanOrEqual(high);
      }
    });
    // A random source out of range is clamped rather than trusted.
    expect(retryDelayMs(1, () => -3)).toBe(4_000);
    expect(retryDelayMs(1, () => 7)).toBe(6_000);
  });

  it('spreads the attempts over about three days, whatever the jitter', () => {
    const nominal = sum(RETRY_DELAYS_MS);
    expect(nominal / HOUR).toBeCloseTo(75.71, 1);
    for (const r of [0, 0.5, 1]) {
      const span = sum(schedule(() => r)) / HOUR;
      expect(span, `random = ${r}`).toBeGreaterThanOrEqual(60);
      expect(span, `random = ${r}`).toBeLessThanOrEqual(80);
    }
  });

  it('is deterministic given the random source', () => {
    let seed = 1;
    const lcg = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const a = schedule(lcg);
    seed = 1;
    expect(schedule(lcg)).toEqual(a);
  });

  it('refuses a count that is not a whole number of failures', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => retryDelayMs(bad)).toThrow(RangeError);
  });
});

describe('withRetryAfter', () => {
  it('takes the longer of backoff and Retry-After, capped at 12 h', () => {
    expect(withRetryAfter(5_000, undefined)).toBe(5_000);
    expect(withRetryAfter(5_000, 7_000)).toBe(7_000);
    expect(withRetryAfter(30_000, 7_000)).toBe(30_000);
    expect(withRetryAfter(5_000, 48 * HOUR)).toBe(MAX_RETRY_DELAY_MS);
    expect(withRetryAfter(14 * HOUR, undefined)).toBe(MAX_RETRY_DELAY_MS);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 9, 21, 7, 28, 0); // Tue, 21 Oct 2025 07:28:00 GMT

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('86400', now)).toBe(86_400_000);
  });

  it('reads the three HTTP-date forms, relative to now', () => {
    expect(parseRetryAfter('Tue, 21 Oct 2025 07:29:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Tuesday, 21-Oct-25 08:28:00 GMT', now)).toBe(HOUR);
    expect(parseRetryAfter('Tue Oct 21 07:28:05 2025', now)).toBe(5_000);
    expect(parseRetryAfter('Sat Nov  1 07:28:00 2025', now)).toBe(11 * 24 * HOUR);
  });

  it('gives 0 for a date already past', () => {
    expect(parseRetryAfter('Mon, 20 Oct 2025 07:28:00 GMT', now)).toBe(0);
  });

  it('ignores absent, negative, fractional and garbage values', () => {
    for (const bad of [
      undefined,
      '',
      '   ',
      '-5',
      '1.5',
      '+5',
      '5s',
      'soon',
      'tomorrow 10am',
      'Oct 22 2025',
      '2025-10-21T08:00:00Z',
      'Tue, 31 Feb 2025 07:28:00 GMT',
      'Tue, 21 Oct 2025 25:00:00 GMT',
      'Tue, 21 Oct 2025 07:29:30 PST',
      '9'.repeat(400),
    ]) {
      expect(parseRetryAfter(bad, now), JSON.stringify(bad)).toBeUndefined();
    }
  });
});

/** A duration as docs/webhooks.md writes it: `1 d 3 h 42 min 35 s`. */
function formatDuration(ms: number): string {
  const parts: string[] = [];
  let s = Math.round(ms / 1000);
  for (const [unit, size] of [['d', 86_400], ['h', 3_600], ['min', 60], ['s', 1]] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)} ${unit}`);
      s %= size;
    }
  }
  return parts.length > 0 ? parts.join(' ') : '0 s';
}

describe('docs/webhooks.md', () => {
  it('shows the schedule the code has', () => {
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1], m[2], m[3]].join(' / '));
    const expected = ['1 / (sent at once) / 0 s'];
    let at = 0;
    RETRY_DELAYS_MS.forEach((d, i) => {
      at += d;
      expected.push(`${i + 2} / ${formatDuration(d)} / ${formatDuration(at)}`);
    });
    expect(rows).toEqual(expected);
    expect(rows).toHaveLength(MAX_ATTEMPTS);
    expect(doc).toContain(`After ${MAX_ATTEMPTS} attempts`);
    expect(doc).toContain(`±${RETRY_JITTER * 100}%`);
    expect(doc).toContain(`no wait exceeds ${MAX_RETRY_DELAY_MS / HOUR} hours`);
  });
});

describe('backoffMs', () => {
  it('starts at the base, doubles with each failure and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, 500, 10_000))).toEqual([500, 1000, 2000, 4000, 8000, 10_000]);
  });

  it('stays finite and capped through a long outage and for nonsense counts', () => {
    expect(backoffMs(10_000, 500, 30_000)).toBe(30_000);
    expect(backoffMs(Number.POSITIVE_INFINITY, 500, 30_000)).toBe(30_000);
    expect(backoffMs(0, 500, 30_000)).toBe(500);
    expect(backoffMs(-3, 500, 30_000)).toBe(500);
  });
});
