import { ConfigError } from '../../config/readers.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { readComfyWorkflow } from './comfyui-binding.js';
import { ComfyuiEngine } from './comfyui-engine.js';
import type { ComfyuiModel } from './comfyui-engine.js';
import type { ComfyuiSettings } from '../../config/comfyui-settings.js';

/** A model bound to some engine, as the runtime knows it: its engine id, its `upstream` block (read by readUpstreamBinding), schema and output types. */
export interface BoundModel {
  readonly engine: string;
  readonly binding: { readonly workflow?: unknown; readonly inputs?: unknown; readonly outputNodes?: unknown } | undefined;
  readonly schema: object | undefined;
  readonly outputTypes: readonly string[];
}

/**
 * One engine per `comfyui` entry, each with the models bound to `comfyui:<name>`, their workflows
 * checked (files read relative to `configDir`). A model bound to an undeclared ComfyUI, or with a
 * workflow that does not check, throws ConfigError naming it.
 */
export function buildComfyuiEngines(
  settings: readonly ComfyuiSettings[],
  models: ReadonlyMap<string, BoundModel>,
  opts: { readonly clock: Clock; readonly outputMaxBytes: number; readonly configDir: string; readonly file: string; readonly log?: Log },
): ComfyuiEngine[] {
  const byName = new Map<string, Map<string, ComfyuiModel>>(settings.map((s) => [s.name, new Map()]));
  for (const [path, model] of models) {
    if (!model.engine.startsWith('comfyui:')) continue;
    const name = model.engine.slice('comfyui:'.length);
    const bound = byName.get(name);
    if (!bound) throw new ConfigError(`${opts.file}: ${path} is bound to ${model.engine}, but comfyui has no '${name}'`);
    if (!model.binding) throw new ConfigError(`${opts.file}: ${path} is bound to ${model.engine} and needs an upstream block with its workflow and inputs`);
    const workflow = readComfyWorkflow(model.binding, `${opts.file}: ${path}.upstream`, opts.configDir);
    bound.set(path, { workflow, schema: model.schema, outputTypes: model.outputTypes });
  }
  return settings.map((s) => new ComfyuiEngine({ settings: s, models: byName.get(s.name)!, clock: opts.clock, outputMaxBytes: opts.outputMaxBytes, ...(opts.log ? { log: opts.log } : {}) }));
}
