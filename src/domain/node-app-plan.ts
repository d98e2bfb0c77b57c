import { GraphError, parseGraph, refsOf, stepLevels } from './node-app-graph.js';
import type { NodeAppGraph } from './node-app-graph.js';
import { isPlainObject as isObject } from '../lib/plain-object.js';

/**
 * What a node-app job stores as its `request` (docs/node-apps.md, "Executing a node app"): the
 * version's graph and the caller's validated inputs, so the worker runs it without reading the
 * node-app store: the job holds all it needs, and the plan is what was admitted and priced.
 */
export interface NodeAppPlan {
  readonly node_app_id: string;
  readonly node_app_version_id: string;
  /** The execute body after the version's input schema (its defaults filled in). */
  readonly inputs: Readonly<Record<string, unknown>>;
  /** The version's graph as published (domain/node-app-graph.ts). */
  readonly graph: Readonly<Record<string, unknown>>;
}

/** A node-app job's type is this prefix and the app's slug: `node-app/upscaler-pro`. */
export const NODE_APP_JOB_PREFIX = 'node-app/';

export const nodeAppJobType = (slug: string): string => `${NODE_APP_JOB_PREFIX}${slug}`;

/** A node app's slug (services/node-apps/node-app-rules.ts): lowercase words of a-z and digits joined by single hyphens. */
export const NODE_APP_SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Whether a job is a node app's (the engine and the run policy ask this of stored jobs). */
export const isNodeAppJob = (type: string): boolean => type.startsWith(NODE_APP_JOB_PREFIX);

/** Whether a type a client names (GET /jobs?types=) can be a node-app job's: the prefix and a slug. */
export const isNodeAppJobType = (type: string): boolean => isNodeAppJob(type) && NODE_APP_SLUG_RE.test(type.slice(NODE_APP_JOB_PREFIX.length));

/** A stored plan's inputs and parsed graph; a GraphError if it is not one. */
export function readPlan(request: Readonly<Record<string, unknown>>): { inputs: Readonly<Record<string, unknown>>; graph: NodeAppGraph } {
  if (!isObject(request.inputs)) throw new GraphError('the job holds no node-app inputs');
  return { inputs: request.inputs, graph: parseGraph(request.graph) };
}

/**
 * The URL a step's n-th output goes by while the graph runs: later steps' bodies carry it, and the
 * node-app engine reads it from the step's local file instead of fetching it. `.invalid` never
 * resolves (RFC 6761), so it can reach no network; `run` (the job id) keeps a run's bodies, and so
 * a seeded engine's output, the same on every attempt, and apart from any URL a caller could know
 * before the job existed.
 */
export function stepOutputUrl(run: string, step: string, n: number): string {
  return `https://steps.node-app.invalid/${encodeURIComponent(run)}/${step}/${n}`;
}

/** For each step, as many stand-in URLs as the graph reads of it: what bodies are checked with. */
export function stepOutputStandIns(graph: NodeAppGraph, run: string): Record<string, string[]> {
  const count = new Map<string, number>();
  for (const step of graph.steps) {
    for (const { ref } of refsOf(step.input, 'input')) {
      if (ref.kind === 'step') count.set(ref.step, Math.max(count.get(ref.step) ?? 0, ref.index + 1));
    }
  }
  return Object.fromEntries(graph.steps.map((s) => [s.id, Array.from({ length: count.get(s.id) ?? 0 }, (_, n) => stepOutputUrl(run, s.id, n))]));
}

/**
 * Steps of one graph running at once. A job holds one worker slot, so its steps together may not
 * load the engines much more than one job does: two lets independent steps overlap without one
 * node-app job running a level of twenty renders at once.
 */
export const STEPS_AT_ONCE = 2;

/**
 * A node-app job's timeout: the graph's levels run one after another, so the budget is the sum of
 * the levels'. A level of at most STEPS_AT_ONCE steps lasts as long as its slowest step; a longer
 * one queues its steps for STEPS_AT_ONCE places, and lasts at most its steps' summed timeouts
 * shared among the places plus the share of its slowest step left over (Graham's bound for list
 * scheduling, which holds however long each step actually takes below its timeout).
 */
export function planTimeoutMs(graph: NodeAppGraph, timeoutOf: (model: string) => number): number {
  return stepLevels(graph).reduce((sum, level) => {
    const times = level.map((s) => timeoutOf(s.model));
    const slowest = Math.max(...times);
    if (times.length <= STEPS_AT_ONCE) return sum + slowest;
    const total = times.reduce((a, b) => a + b, 0);
    return sum + Math.ceil(total / STEPS_AT_ONCE + slowest * (1 - 1 / STEPS_AT_ONCE));
  }, 0);
}
