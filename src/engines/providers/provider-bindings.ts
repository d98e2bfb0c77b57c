import { ConfigError } from '../../config/readers.js';
import type { ProviderSettings, UpstreamBinding } from '../../config/provider-settings.js';
import { providerType } from '../../config/provider-types.js';
import { globSpecificity, isGlob, isGlobPattern, matchesGlob, GLOB_SYNTAX } from '../../lib/glob.js';
import { PROVIDER_PREFIX } from '../bindings.js';
import type { EngineBindings } from '../bindings.js';

/** A model bound to a provider, with how it maps onto it. */
export interface ProviderRoute {
  readonly provider: ProviderSettings;
  readonly upstream: UpstreamBinding;
}

/** What the check reads of a model: its path, whether it takes requests, and a custom model's own `upstream`. */
export interface RoutableModel {
  readonly path: string;
  readonly engine?: string | undefined;
  readonly custom?: { readonly where: string } | undefined;
}

/** Engines the config file names instances of, whose models may carry an `upstream` block. */
const NAMED_PREFIXES = [PROVIDER_PREFIX, 'comfyui:', 'command:'] as const;

/** A model bound to a named engine (`provider:`, `comfyui:`, `command:`), with its `upstream` block if it has one. */
export interface NamedBinding {
  readonly engine: string;
  readonly upstream: UpstreamBinding | undefined;
}

/**
 * Every model bound to a named engine with its `upstream` block: a custom model's own, a built-in
 * model's from the top-level `upstream` (its path, else the most specific pattern). An `upstream`
 * key matching no such built-in model, and an `upstream` on a model bound elsewhere, are a
 * ConfigError naming it.
 */
export function namedBindings(
  models: readonly RoutableModel[],
  bindings: EngineBindings,
  upstreams: Readonly<Record<string, UpstreamBinding>>,
  customUpstreams: ReadonlyMap<string, UpstreamBinding>,
): ReadonlyMap<string, NamedBinding> {
  const engineOf = (path: string): string | undefined => {
    const b = bindings.of(path);
    return b?.kind === 'engine' && NAMED_PREFIXES.some((p) => b.engine.startsWith(p)) ? b.engine : undefined;
  };
  const builtIn = models.filter((m) => m.engine !== undefined && !m.custom && engineOf(m.path) !== undefined).map((m) => m.path);
  for (const key of Object.keys(upstreams)) {
    if (isGlob(key) && !isGlobPattern(key)) throw new ConfigError(`upstream: '${key.slice(0, 200)}' is not a pattern; a pattern is ${GLOB_SYNTAX}`);
    if (!builtIn.some((path) => (isGlob(key) ? matchesGlob(key, path) : key === path))) {
      const those = builtIn.length ? `; those are ${builtIn.join(', ')}` : '';
      throw new ConfigError(`upstream.${key} matches no built-in model bound to a provider, ComfyUI or command engine (model_engines "provider:<name>")${those}`);
    }
  }
  const out = new Map<string, NamedBinding>();
  for (const m of models) {
    if (m.engine === undefined) continue;
    const engine = engineOf(m.path);
    const own = customUpstreams.get(m.path);
    if (engine === undefined) {
      if (own) throw new ConfigError(`${m.custom?.where ?? m.path}.upstream: the model is not bound to a provider; its engine must be "provider:<name>" (or comfyui:, command:)`);
      continue;
    }
    out.set(m.path, { engine, upstream: m.custom ? own : mostSpecific(m.path, upstreams) });
  }
  return out;
}

/**
 * Every model bound to `provider:<name>` with its provider and its `upstream` mapping, checked at
 * start in every process (an API-only one too): a binding to a provider `providers` does not
 * declare and a model with no mapping where its provider type needs one (`needsUpstreamModel`:
 * all but `krea`, which calls its own path by default) are each a ConfigError naming the model.
 */
export function resolveProviderRoutes(
  models: readonly RoutableModel[],
  bindings: EngineBindings,
  providers: readonly ProviderSettings[],
  upstreams: Readonly<Record<string, UpstreamBinding>>,
  customUpstreams: ReadonlyMap<string, UpstreamBinding>,
): ReadonlyMap<string, ProviderRoute> {
  const byName = new Map(providers.map((p) => [p.name, p]));
  const routes = new Map<string, ProviderRoute>();
  for (const [path, { engine, upstream }] of namedBindings(models, bindings, upstreams, customUpstreams)) {
    if (!engine.startsWith(PROVIDER_PREFIX)) continue;
    const name = engine.slice(PROVIDER_PREFIX.length);
    const origin = bindings.origin(path);
    const provider = byName.get(name);
    if (!provider) {
      const declared = providers.map((p) => p.name).join(', ') || 'none';
      throw new ConfigError(`model ${path} is bound to provider '${name}'${origin ? ` (${origin})` : ''}, which providers does not declare; providers: ${declared}`);
    }
    if (!upstream?.model && providerType(provider.type).needsUpstreamModel) {
      const custom = models.find((m) => m.path === path)?.custom;
      const where = custom ? `${custom.where}.upstream.model` : `upstream["${path}"].model`;
      throw new ConfigError(`model ${path} is bound to ${provider.type} provider '${name}' but names no provider model; set ${where} (docs/providers.md)`);
    }
    routes.set(path, { provider, upstream: upstream ?? {} });
  }
  return routes;
}

/** The `upstream` entry for a built-in model: its path, else the most specific pattern matching it. */
function mostSpecific(path: string, upstreams: Readonly<Record<string, UpstreamBinding>>): UpstreamBinding | undefined {
  if (Object.hasOwn(upstreams, path)) return upstreams[path];
  const matching = Object.keys(upstreams).filter((k) => isGlob(k) && matchesGlob(k, path));
  if (matching.length === 0) return undefined;
  const best = Math.max(...matching.map(globSpecificity));
  const top = matching.filter((k) => globSpecificity(k) === best);
  if (top.length > 1) throw new ConfigError(`upstream: '${top[0]}' and '${top[1]}' both match ${path}, equally specifically; add an entry for ${path} itself`);
  return upstreams[top[0]!];
}
