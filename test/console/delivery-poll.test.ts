import { describe, expect, it } from 'vitest';
import { DELIVERY_POLL_MAX_MS, DELIVERY_POLL_MIN_MS, deliveryPollDelay } from '../../console/src/pages/jobs/delivery-poll.js';

/** When the job page reads a pending webhook delivery again (console/src/pages/jobs/delivery-poll.ts), in Node. */
describe('console webhook delivery polling', () => {
  const now = Date.UTC(2026, 0, 1, 12);
  const at = (ms: number) => new Date(now + ms).toISOString();

  it('does not poll when no delivery is pending', () => {
    expect(deliveryPollDelay([], now)).toBeUndefined();
    expect(deliveryPollDelay([{ state: 'delivered', next_attempt_at: null }, { state: 'exhausted', next_attempt_at: null }], now)).toBeUndefined();
  });

  it('reads again just after the earliest pending attempt', () => {
    const delay = deliveryPollDelay(
      [
        { state: 'pending', next_attempt_at: at(60_000) },
        { state: 'pending', next_attempt_at: at(30_000) },
        { state: 'delivered', next_attempt_at: at(10_000) },
      ],
      now,
    );
    expect(delay).toBeGreaterThan(30_000);
    expect(delay).toBeLessThan(35_000);
  });

  it('waits at least the minimum for an attempt due or overdue, and at most the maximum for one hours away', () => {
    expect(deliveryPollDelay([{ state: 'pending', next_attempt_at: at(-60_000) }], now)).toBe(DELIVERY_POLL_MIN_MS);
    expect(deliveryPollDelay([{ state: 'pending', next_attempt_at: null }], now)).toBe(DELIVERY_POLL_MIN_MS);
    expect(deliveryPollDelay([{ state: 'pending', next_attempt_at: at(6 * 3600_000) }], now)).toBe(DELIVERY_POLL_MAX_MS);
  });
});
