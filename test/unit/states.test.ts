import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATUSES,
  JOB_STATUSES,
  MOVES,
  NON_TERMINAL_STATUSES,
  TERMINAL_STATUSES,
  TRANSITIONS,
  UNUSED_TRANSITIONS,
  assertMove,
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

  it('makes every named move along a legal transition', () => {
    for (const [name, move] of Object.entries(MOVES)) {
      expect(move.from.length, name).toBeGreaterThan(0);
      for (const from of move.from) expect(canTransition(from, move.to), `${name}: ${from} -> ${move.to}`).toBe(true);
    }
  });

  it('makes every legal transition by some named move, except the ones listed as unused', () => {
    const edge = (from: string, to: string) => `${from} -> ${to}`;
    const made = new Set(Object.values(MOVES).flatMap((m) => m.from.map((f) => edge(f, m.to))));
    const unused = new Set(UNUSED_TRANSITIONS.map(([f, t]) => edge(f, t)));
    const legal = JOB_STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => edge(from, to)));
    expect(legal.filter((e) => !made.has(e) && !unused.has(e))).toEqual([]);
    // An unused edge that some move makes is a stale list; one the table forbids is a typo.
    expect([...unused].filter((e) => made.has(e) || !legal.includes(e))).toEqual([]);
  });

  it('refuses a named move from a status outside its guard before any write', () => {
    expect(() => assertMove('complete', 'processing')).toThrow(/illegal job status transition processing -> completed/);
    expect(() => assertMove('start', 'queued')).toThrow(/queued -> processing/);
    expect(() => assertMove('complete', 'intermediate-complete')).not.toThrow();
  });

  it('is the named moves table docs/states.md shows', () => {
    const doc = readFileSync(new URL('../../docs/states.md', import.meta.url), 'utf8');
    const rows = new Map<string, { from: string[]; to: string; lease: string }>();
    for (const m of doc.matchAll(/^\| `([a-zA-Z]+)` \| ((?:`[a-z-]+`(?:, )?)+) \| `([a-z-]+)` \| ([a-z]+) \|/gm)) {
      rows.set(m[1]!, { from: [...m[2]!.matchAll(/`([a-z-]+)`/g)].map((x) => x[1]!), to: m[3]!, lease: m[4]! });
    }
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(MOVES).map(([n, m]) => [n, { from: [...m.from], to: m.to, lease: m.lease }])));
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
