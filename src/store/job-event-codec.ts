import type { JobEvent } from './store.js';

/**
 * A JobEvent as it travels between processes (NOTIFY payload, wake-socket line). `origin` names
 * the store that sent it, where the channel also brings a sender its own events back.
 */
export const encodeJobEvent = (event: JobEvent, origin?: string): string => JSON.stringify(origin ? { ...event, origin } : event);

/**
 * The event in `payload`, or undefined for anything else: a channel may carry what is not ours.
 * Also undefined when it came from `self`: that store already told its own process at commit
 * (Store.onEvent), and hearing it twice woke the worker for a second claim that found nothing.
 */
export function decodeJobEvent(payload: string | undefined, self?: string): JobEvent | undefined {
  try {
    const e = JSON.parse(payload ?? '') as Partial<{ kind: string; jobId: string; origin: string }>;
    if (self !== undefined && e.origin === self) return undefined;
    if (e.kind === 'queued') return { kind: 'queued' };
    if (e.kind === 'webhook') return { kind: 'webhook' };
    if (e.kind === 'cancelled' && typeof e.jobId === 'string') return { kind: 'cancelled', jobId: e.jobId };
    if (e.kind === 'changed' && typeof e.jobId === 'string') return { kind: 'changed', jobId: e.jobId };
  } catch {
    // Not ours.
  }
  return undefined;
}
