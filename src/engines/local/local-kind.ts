import type { EngineKind } from '../engine-kind.js';

/**
 * The built-in engine (this folder): one engine, bound as `local`, rendering the built-in models
 * only (bindings.ts refuses a custom model bound to it). No config section. The only state it
 * stores with a job is which upscaler an enhancer ran (renderers/enhance-renderer.ts,
 * `upscalerState`), which a job's details show: `status` names it (`esrgan-medium x4`,
 * `lanczos3`) and `usage` holds its parts (`upscaler`, `scale`, or lanczos3's `reason`).
 */
export const LOCAL_KIND: EngineKind = {
  name: 'local',
  build: async (w, opts) => {
    const { LocalEngine } = await import('./local-engine.js');
    return [new LocalEngine({ clock: opts.clock, latencyMs: w.config.engineLatencyMs, limits: opts.limits })];
  },
  describe: (state) => {
    const { upscaler, scale, reason } = state;
    if (typeof upscaler !== 'string') return { status: null, usage: null, final: true };
    const usage: Record<string, number | string> = { upscaler };
    if (typeof scale === 'number') usage.scale = scale;
    if (typeof reason === 'string') usage.reason = reason;
    return { status: typeof scale === 'number' ? `${upscaler} x${scale}` : upscaler, usage, final: true };
  },
};
