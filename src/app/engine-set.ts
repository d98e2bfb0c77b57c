import type { Config } from '../config/config.js';
import type { EngineBindings } from '../engines/bindings.js';
import { buildBindings } from '../engines/bindings.js';
import type { BindableEngine } from '../engines/engine.js';
import { namedBindings, resolveProviderRoutes } from '../engines/providers/provider-bindings.js';
import type { NamedBinding, ProviderRoute } from '../engines/providers/provider-bindings.js';
import { ConfigError } from '../config/config.js';
import { mainOutputTypes } from '../models/model.js';
import { readComfyWorkflow } from '../engines/comfyui/comfyui-binding.js';
import type { CatalogEntry } from '../models/catalog.js';
import type { ProviderMeter } from '../engines/providers/provider-engine.js';
import { UpstreamNudges } from '../engines/providers/upstream-nudges.js';
import type { EngineRouter } from '../engines/router.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { buildCatalog } from '../models/catalog.js';
import type { Catalog } from '../models/catalog.js';
import { modelsWith } from '../models/custom-models.js';
import { mediaLimits } from './settings.js';

export interface EngineSetOptions {
  readonly clock: Clock;
  readonly nudges: UpstreamNudges;
  readonly meter?: ProviderMeter;
  readonly log?: Log;
}

/** The engines of one process behind the router that hands each job to its model's. */
export interface EngineSet {
  readonly router: EngineRouter;
  readonly engines: readonly BindableEngine[];
  /** Stops what the engines keep running (a command engine's processes). */
  close(): Promise<void>;
}

/** What a config's models are bound to, checked: the catalog, the bindings and the provider routes. */
export interface ModelWiring {
  readonly catalog: Catalog;
  readonly bindings: EngineBindings;
  readonly routes: ReadonlyMap<string, ProviderRoute>;
  /** Every model bound to a named engine (provider:, comfyui:, command:) with its `upstream` block. */
  readonly named: ReadonlyMap<string, NamedBinding>;
}

/** The catalog, bindings and provider routes a config makes; throws a ConfigError naming a bad binding. */
export function wireModels(config: Config): ModelWiring {
  const catalog = buildCatalog({ deprecations: config.deprecations, models: modelsWith(config.models) });
  const bindings = buildBindings(catalog.entries, config.modelEngines);
  const customUpstreams = new Map(config.models.flatMap((m) => (m.upstream ? [[m.path, m.upstream] as const] : [])));
  const routes = resolveProviderRoutes(catalog.entries, bindings, config.providers, config.upstreams, customUpstreams);
  const named = namedBindings(catalog.entries, bindings, config.upstreams, customUpstreams);
  const sections = { 'command:': ['commands', config.commands], 'comfyui:': ['comfyui', config.comfyui] } as const;
  for (const [path, { engine, upstream }] of named) {
    const prefix = engine.startsWith('command:') ? 'command:' : engine.startsWith('comfyui:') ? 'comfyui:' : undefined;
    if (!prefix) continue;
    const [section, declared] = sections[prefix];
    if (!declared.some((d) => `${prefix}${d.name}` === engine)) {
      const origin = bindings.origin(path);
      throw new ConfigError(`model ${path} is bound to ${engine}${origin ? ` (${origin})` : ''}, which ${section} does not declare; ${section}: ${declared.map((d) => d.name).join(', ') || 'none'}`);
    }
    // A ComfyUI model's workflow is checked at start, in every role, as any other binding is.
    if (prefix === 'comfyui:') {
      if (!upstream) throw new ConfigError(`model ${path} is bound to ${engine} and needs an upstream block with its workflow and inputs (docs/engines.md)`);
      readComfyWorkflow(upstream, `model ${path}: upstream`, config.configDir);
    }
  }
  return { catalog, bindings, routes, named };
}

/** The models bound to the named engine `engine`, as an engine of that kind takes them. */
function modelsOf<T>(wiring: ModelWiring, engine: string, make: (entry: CatalogEntry, binding: NamedBinding) => T): Map<string, T> {
  const out = new Map<string, T>();
  for (const [path, binding] of wiring.named) {
    const entry = wiring.catalog.get(path);
    if (binding.engine === engine && entry) out.set(path, make(entry, binding));
  }
  return out;
}

/**
 * The one place a process's engines are built, for `serve`'s workers and `mediagen remote-worker`
 * alike: the built-in engine and one engine per configured provider; each model's job goes to the
 * engine its binding names (its module's `engine`, or the config's `model_engines`: bindings.ts).
 * Adding an engine kind is adding it here.
 */
export async function buildEngineSet(config: Config, wiring: ModelWiring, opts: EngineSetOptions): Promise<EngineSet> {
  const [{ LocalEngine }, { EngineRouter }, { buildProviderEngines }, { CommandEngine }, { buildComfyuiEngines }] = await Promise.all([
    import('../engines/local/local-engine.js'),
    import('../engines/router.js'),
    import('./provider-engines.js'),
    import('../engines/command/command-engine.js'),
    import('../engines/comfyui/comfyui-build.js'),
  ]);
  const local = new LocalEngine({ clock: opts.clock, latencyMs: config.engineLatencyMs, limits: mediaLimits(config) });
  const providers = buildProviderEngines(config, wiring.catalog, wiring.routes, opts);
  // Processes start at their first job: a server whose command models get no job loads no model.
  const commands = config.commands.map(
    (settings) =>
      new CommandEngine({
        settings,
        models: modelsOf(wiring, `command:${settings.name}`, (entry, b) => ({ schema: entry.request, outputTypes: mainOutputTypes(entry), ...(b.upstream?.input !== undefined ? { input: b.upstream.input } : {}) })),
        clock: opts.clock,
        outputMaxBytes: config.workerOutputMaxBytes,
        ...(opts.log ? { log: opts.log } : {}),
      }),
  );
  const comfyModels = new Map(
    [...wiring.named].flatMap(([path, b]) => {
      const entry = wiring.catalog.get(path);
      return entry && b.engine.startsWith('comfyui:') ? [[path, { engine: b.engine, binding: b.upstream, schema: entry.request, outputTypes: mainOutputTypes(entry) }] as const] : [];
    }),
  );
  const comfy = buildComfyuiEngines(config.comfyui, comfyModels, {
    clock: opts.clock,
    outputMaxBytes: config.workerOutputMaxBytes,
    configDir: config.configDir,
    file: 'the config file',
    ...(opts.log ? { log: opts.log } : {}),
  });
  const engines: BindableEngine[] = [local, ...providers, ...commands, ...comfy];
  return {
    router: EngineRouter.build(wiring.catalog.entries, engines, wiring.bindings),
    engines,
    close: async () => {
      await Promise.all(commands.map((c) => c.close()));
    },
  };
}

export { UpstreamNudges };
