import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { CachedReading } from '../../src/metrics/cached-reading.js';

describe('CachedReading', () => {
  it('answers undefined when the read hangs, starts no second read while it is pending, and caches it once it lands', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    let calls = 0;
    let release!: (n: number) => void;
    const reading = new CachedReading(
      () => {
        calls++;
        return new Promise<number>((resolve) => (release = resolve));
      },
      5000,
      clock,
      30,
    );
    expect(await reading.read()).toBeUndefined();
    clock.advance(10_000);
    expect(await reading.read()).toBeUndefined();
    expect(calls).toBe(1);
    release(7);
    await new Promise((r) => setImmediate(r));
    expect(await reading.read()).toBe(7);
    expect(calls).toBe(1);
  });

  it('does not cache a failed read: the next scrape reads again', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    let calls = 0;
    const reading = new CachedReading(async () => (++calls === 1 ? Promise.reject(new Error('db down')) : calls), 5000, clock, 1000);
    expect(await reading.read()).toBeUndefined();
    expect(await reading.read()).toBe(2);
    expect(await reading.read()).toBe(2);
  });
});
