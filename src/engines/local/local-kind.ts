import type { EngineKind } from '../engine-kind.js';

/**
 * The built-in engine (this folder): one engine, bound as `local`, rendering the built-in models
 * only (bindings.ts refuses a custom model bound to it). No config section, no state stored.
 */
export const LOCAL_KIND: EngineKind = {
  name: 'local',
  build: async (w, opts) => {
    const { LocalEngine } = await import('./local-engine.js');
    return [new LocalEngine({ clock: opts.clock, latencyMs: w.config.engineLatencyMs, limits: opts.limits })];
  },
};
