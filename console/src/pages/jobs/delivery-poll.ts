import type { WebhookDelivery } from './api.js';

/**
 * When the job page reads a pending webhook delivery again. Pure, so
 * test/console/delivery-poll.test.ts runs it in Node.
 */

/**
 * While a webhook delivery is pending (being retried), the job is read again at its next attempt,
 * but not sooner than this after the last read (the attempt is due now or overdue: the sender may
 * be late)...
 */
export const DELIVERY_POLL_MIN_MS = 5_000;
/** ...and not later than this (a retry hours away still shows up within minutes if it is made earlier). */
export const DELIVERY_POLL_MAX_MS = 5 * 60_000;

/** After the attempt's time, so that the read finds the attempt made rather than about to be. */
const AFTER_ATTEMPT_MS = 1_000;

/** How long to wait before reading a pending delivery again: until its next attempt, within the bounds above. */
export function deliveryPollDelay(deliveries: readonly Pick<WebhookDelivery, 'state' | 'next_attempt_at'>[], now: number): number | undefined {
  const pending = deliveries.filter((d) => d.state === 'pending');
  if (pending.length === 0) return undefined;
  const times = pending.map((d) => (d.next_attempt_at ? Date.parse(d.next_attempt_at) : NaN)).filter((t) => Number.isFinite(t));
  // No time known: as soon as the bounds allow.
  const next = times.length ? Math.min(...times) : now - AFTER_ATTEMPT_MS;
  return Math.min(DELIVERY_POLL_MAX_MS, Math.max(DELIVERY_POLL_MIN_MS, next + AFTER_ATTEMPT_MS - now));
}
