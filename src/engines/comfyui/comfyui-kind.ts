import { ConfigError } from '../../config/readers.js';
import { mainOutputTypes } from '../../models/model.js';
import type { EngineKind, KindWiring } from '../engine-kind.js';
import type { BoundModel } from './comfyui-build.js';
import { readComfyWorkflow } from './comfyui-binding.js';

/** Each model bound to a `comfyui:<name>` engine, its workflow checked (read from a file relative to the config file). */
function modelsOf(w: KindWiring): Map<string, BoundModel> {
  const out = new Map<string, BoundModel>();
  for (const [path, { engine, upstream }] of w.bound) {
    const entry = w.catalog.get(path);
    if (!entry) continue;
    if (!upstream) throw new ConfigError(`model ${path} is bound to ${engine} and needs an upstream block with its workflow and inputs (docs/engines.md)`);
    readComfyWorkflow(upstream, `model ${path}: upstream`, w.config.configDir);
    out.set(path, { engine, binding: upstream, schema: entry.request, outputTypes: mainOutputTypes(entry) });
  }
  return out;
}

/**
 * ComfyUI servers (docs/engines.md, "ComfyUI engine"): the config's `comfyui`, each an engine bound
 * as `comfyui:<name>`. Start-up reads and checks each model's workflow, in every role; each engine's
 * check asks the server whether it answers, and only warns when it does not (comfyui-check.ts).
 * The state stored with a job is a prompt id and client id, with no status of ComfyUI's.
 */
export const COMFYUI_KIND: EngineKind = {
  name: 'comfyui',
  section: { key: 'comfyui', names: (config) => config.comfyui.map((c) => c.name) },
  check: (w) => void modelsOf(w),
  build: async (w, opts) =>
    (await import('./comfyui-build.js')).buildComfyuiEngines(w.config.comfyui, modelsOf(w), {
      clock: opts.clock,
      outputMaxBytes: w.config.workerOutputMaxBytes,
      configDir: w.config.configDir,
      file: 'the config file',
      ...(opts.log ? { log: opts.log } : {}),
    }),
};
