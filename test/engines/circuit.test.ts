import { describe, expect, it } from 'vitest';
import { Circuit } from '../../src/engines/circuit.js';
import { EngineError } from '../../src/engines/engine.js';
import { UpstreamError, upstreamJobError } from '../../src/engines/upstream/upstream-error.js';
import { ManualClock } from '../../src/lib/clock.js';

const down = () => upstreamJobError(new UpstreamError('unavailable', 'service unavailable', { status: 503 }));

describe('engine circuit', () => {
  it('opens after `failures` engine failures in a row, half-opens for one probe after the cooldown, and closes on its success; logs each change once at warn', () => {
    const clock = new ManualClock('2026-12-01T00:00:00Z');
    const lines: string[] = [];
    const log = { info: () => undefined, error: () => undefined, warn: (_o: object, msg: string) => void lines.push(msg) };
    const c = new Circuit('provider:fal', { failures: 3, cooldownMs: 10_000 }, clock, log);
    c.report(down());
    c.report(down());
    expect(c.state).toBe('closed');
    c.report(down());
    c.report(down());
    expect(c.state).toBe('open');
    expect(c.allow()).toBe(false);
    clock.advance(10_000);
    expect(c.state).toBe('half_open');
    expect(c.allow()).toBe(true);
    // One probe at a time.
    expect(c.allow()).toBe(false);
    c.report(undefined);
    expect(c.state).toBe('closed');
    expect(lines.filter((l) => l.includes('opened'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('closed'))).toHaveLength(1);
  });

  it('a failed probe opens it again; failures that speak of the job (a refused request) reset the count', () => {
    const clock = new ManualClock('2026-12-01T00:00:00Z');
    const c = new Circuit('comfyui:gpu', { failures: 2, cooldownMs: 1000 }, clock, undefined);
    c.report(down());
    c.report(new EngineError('upstream_rejected', 'bad prompt'));
    c.report(down());
    expect(c.state).toBe('closed');
    c.report(down());
    expect(c.state).toBe('open');
    clock.advance(1000);
    expect(c.allow()).toBe(true);
    c.report(down());
    expect(c.state).toBe('open');
  });
});
