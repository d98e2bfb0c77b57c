import { describe, expect, it } from 'vitest';
import { kindOf } from '../../src/engines/kinds.js';
import { describeProviderState } from '../../src/engines/providers/provider-kind.js';
import { statusShown } from '../../src/services/jobs/job-details.js';

describe("a kind's reading of its engines' stored state, for a job's details", () => {
  it('the provider kind reads status and usage, and whether the provider job ended, from the mapped phase', () => {
    expect(describeProviderState({ handle: { id: 'p' }, status: 'processing', phase: 'running' })).toEqual({ status: 'processing', usage: null, final: false });
    expect(describeProviderState({ handle: { id: 'p' }, status: 'succeeded', phase: 'succeeded', usage: { predict_time: 2.31 } })).toEqual({ status: 'succeeded', usage: { predict_time: 2.31 }, final: true });
    // fal spells a failed request COMPLETED: the phase, not the spelling, says it ended.
    expect(describeProviderState({ status: 'COMPLETED', phase: 'failed' }).final).toBe(true);
    expect(describeProviderState({ status: 'IN_PROGRESS', phase: 'running' }).final).toBe(false);
  });

  it('a state stored before the phase was kept is judged by the spellings of an ended job', () => {
    expect(describeProviderState({ status: 'canceled' }).final).toBe(true);
    expect(describeProviderState({ status: 'COMPLETED' }).final).toBe(true);
    expect(describeProviderState({ status: 'starting' }).final).toBe(false);
    expect(describeProviderState({})).toEqual({ status: null, usage: null, final: false });
  });

  it('engines are found by the id they stored: a provider by its kind, ComfyUI with no status of its own', () => {
    expect(kindOf('provider:replicate')?.describe).toBe(describeProviderState);
    expect(kindOf('comfyui:gpu')?.describe).toBeUndefined();
    expect(kindOf('replicate')).toBeUndefined();
  });
});

describe('upstream.status in the details once the job ended', () => {
  const running = { status: 'sampling', error: null } as const;
  it('the recorded status stands while the job runs, once final there, and for a completed job', () => {
    expect(statusShown('processing', false, running)).toBe('processing');
    expect(statusShown('failed', true, { status: 'failed', error: { code: 'upstream_failed', message: 'x' } })).toBe('failed');
    expect(statusShown(null, false, { status: 'completed', error: null })).toBeNull();
  });

  it('a job that ended otherwise with its upstream still working shows cancelled, or null after worker_lost', () => {
    expect(statusShown('processing', false, { status: 'cancelled', error: null })).toBe('cancelled');
    expect(statusShown('processing', false, { status: 'failed', error: { code: 'timeout', message: 'x' } })).toBe('cancelled');
    expect(statusShown('processing', false, { status: 'failed', error: { code: 'upstream_unavailable', message: 'x' } })).toBe('cancelled');
    expect(statusShown('processing', false, { status: 'failed', error: { code: 'worker_lost', message: 'x' } })).toBeNull();
  });
});
