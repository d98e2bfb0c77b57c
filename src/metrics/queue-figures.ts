import type { EngineBinding } from '../engines/bindings.js';
import { REMOTE_PREFIX } from '../engines/bindings.js';
import type { Micros } from '../lib/time.js';
import { modelLabel } from '../services/common/meter.js';
import type { TypeQueue } from '../store/queue-stats.js';

/** One series of the scaling gauges: a model and the engine its jobs wait for. */
export interface ModelQueue {
  readonly model: string;
  readonly engine: string;
  readonly waiting: number;
  /** Seconds since the oldest waiting job was created; 0 when none waits. */
  readonly oldestWaitSeconds: number;
  readonly running: number;
}

/** The engine label: an engine id, `remote:<pool>`, or `in-process` for a job type with no binding (a node app's). */
export function engineLabel(binding: EngineBinding | undefined): string {
  if (!binding) return 'in-process';
  return binding.kind === 'remote' ? `${REMOTE_PREFIX}${binding.pool}` : binding.engine;
}

/**
 * The store's per-type queues as series per model and engine: waiting jobs under the engine their
 * model is bound to first (what they wait for), running jobs under the engine their route records
 * (the one of a chain that took them), else the bound one. Node-app types share one model label
 * (meter.ts), so theirs are summed and the oldest of them kept.
 */
export function modelQueues(types: readonly TypeQueue[], bindingOf: (type: string) => EngineBinding | undefined, now: Micros): ModelQueue[] {
  const series = new Map<string, { model: string; engine: string; waiting: number; oldest: Micros | null; running: number }>();
  const at = (model: string, engine: string) => {
    const key = `${model}\u0000${engine}`;
    return series.get(key) ?? series.set(key, { model, engine, waiting: 0, oldest: null, running: 0 }).get(key)!;
  };
  for (const t of types) {
    const model = modelLabel(t.type);
    const bound = engineLabel(bindingOf(t.type));
    const s = at(model, bound);
    s.waiting += t.waiting;
    if (t.oldestWaitingCreatedAt !== null && (s.oldest === null || t.oldestWaitingCreatedAt < s.oldest)) s.oldest = t.oldestWaitingCreatedAt;
    for (const r of t.runningOn) at(model, r.engine ?? bound).running += r.n;
  }
  return [...series.values()].map((s) => ({
    model: s.model,
    engine: s.engine,
    waiting: s.waiting,
    running: s.running,
    oldestWaitSeconds: s.oldest === null ? 0 : Math.max(0, now - s.oldest) / 1e6,
  }));
}
