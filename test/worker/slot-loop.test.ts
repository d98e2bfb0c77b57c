import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { SlotLoop } from '../../src/worker/slot-loop.js';
import { waitFor } from '../helpers/scripted-engine.js';

describe('SlotLoop', () => {
  it('claims before it maintains, so an item queued when maintenance falls due is not kept waiting for it', async () => {
    const clock = new ManualClock('2026-11-29T00:00:00Z');
    const events: string[] = [];
    let queued = 0;
    let releaseMaintenance: () => void = () => undefined;
    const loop = new SlotLoop<number>(
      {
        claim: async (max) => {
          const n = Math.min(max, queued);
          queued -= n;
          events.push(`claim ${n}`);
          return Array.from({ length: n }, (_, i) => i);
        },
        run: async () => {
          events.push('run');
        },
        failed: () => undefined,
        maintain: () => {
          events.push('maintain');
          // The sweep is slow: the run of what was claimed must not wait for it.
          return new Promise<void>((resolve) => (releaseMaintenance = resolve));
        },
      },
      { concurrency: 2, pollMs: 1000, clock },
    );
    queued = 1;
    loop.start();
    await waitFor(async () => events.includes('maintain'), 'the first maintenance');
    expect(events.slice(0, 2)).toEqual(['claim 1', 'run']);
    releaseMaintenance();
    await loop.stop();
  });
});
