import type { JobEvent } from './store.js';

/** A JobEvent as it travels between processes (NOTIFY payload, wake-socket line). */
export const encodeJobEvent = (event: JobEvent): string => JSON.stringify(event);

/** The event in `payload`, or undefined for anything else: a channel may carry what is not ours. */
export function decodeJobEvent(payload: string | undefined): JobEvent | undefined {
  try {
    const e = JSON.parse(payload ?? '') as Partial<{ kind: string; jobId: string }>;
    if (e.kind === 'queued') return { kind: 'queued' };
    if (e.kind === 'webhook') return { kind: 'webhook' };
    if (e.kind === 'cancelled' && typeof e.jobId === 'string') return { kind: 'cancelled', jobId: e.jobId };
    if (e.kind === 'changed' && typeof e.jobId === 'string') return { kind: 'changed', jobId: e.jobId };
  } catch {
    // Not ours.
  }
  return undefined;
}
