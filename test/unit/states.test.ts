import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATUSES,
  JOB_STATUSES,
  NON_TERMINAL_STATUSES,
  TERMINAL_STATUSES,
  TRANSITIONS,
  assertTransition,
  canTransition,
  predecessorsOf,
} from '../../src/domain/states.js';

describe('job state machine', () => {
  it('lets no job leave a terminal status', () => {
    for (const s of TERMINAL_STATUSES) expect(TRANSITIONS[s]).toEqual([]);
  });

  it('lets every non-terminal status fail or be cancelled', () => {
    for (const s of NON_TERMINAL_STATUSES) {
      expect(canTransition(s, 'failed')).toBe(true);
      expect(canTransition(s, 'cancelled')).toBe(true);
    }
  });

  it('reaches every status from creation along the normal flow', () => {
    const seen = new Set<string>(['backlogged', 'queued']);
    const todo = ['backlogged', 'queued'] as (typeof JOB_STATUSES)[number][];
    while (todo.length > 0) {
      for (const next of TRANSITIONS[todo.pop()!]) {
        if (!seen.has(next)) {
          seen.add(next);
          todo.push(next);
        }
      }
    }
    expect([...seen].sort()).toEqual([...JOB_STATUSES].sort());
  });

  it('runs the happy path one step at a time and refuses skipping a step', () => {
    const path = ['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed'] as const;
    for (let i = 1; i < path.length; i++) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
    expect(canTransition('queued', 'completed')).toBe(false);
    expect(canTransition('backlogged', 'scheduled')).toBe(false);
    expect(canTransition('completed', 'queued')).toBe(false);
    expect(() => assertTransition('failed', 'completed')).toThrow(/illegal job status transition failed -> completed/);
  });

  it('returns only running jobs to the queue', () => {
    expect(predecessorsOf('queued').sort()).toEqual(['backlogged', 'intermediate-complete', 'processing', 'sampling', 'scheduled'].sort());
  });

  it('counts queued and running jobs against the concurrency limit, not backlogged ones', () => {
    expect(ACTIVE_STATUSES).not.toContain('backlogged');
    expect([...ACTIVE_STATUSES, 'backlogged'].sort()).toEqual([...NON_TERMINAL_STATUSES].sort());
  });

  it('is the table docs/states.md shows', () => {
    const doc = readFileSync(new URL('../../docs/states.md', import.meta.url), 'utf8');
    const rows = new Map<string, string[]>();
    for (const m of doc.matchAll(/^\| `([a-z-]+)` \| ((?:`[a-z-]+`(?:, )?)+|\(none\)) \|$/gm)) {
      rows.set(m[1]!, m[2] === '(none)' ? [] : [...m[2]!.matchAll(/`([a-z-]+)`/g)].map((x) => x[1]!));
    }
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(JOB_STATUSES.map((s) => [s, [...TRANSITIONS[s]]])));
  });
});
