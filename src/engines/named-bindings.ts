import { ConfigError } from '../config/readers.js';
import type { UpstreamBinding } from '../config/provider-settings.js';
import { GLOB_SYNTAX, globSpecificity, isGlob, isGlobPattern, matchesGlob } from '../lib/glob.js';
import type { EngineBindings } from './bindings.js';

/** What the check reads of a model: its path, whether it takes requests, and a custom model's own `where`. */
export interface RoutableModel {
  readonly path: string;
  readonly engine?: string | undefined;
  readonly custom?: { readonly where: string } | undefined;
}

/** A model bound to a named engine (an instance a config section declares: `provider:`, `comfyui:`, `command:`), with its `upstream` block if it has one. */
export interface NamedBinding {
  readonly engine: string;
  readonly upstream: UpstreamBinding | undefined;
}

/**
 * Every model bound to a named engine (`isNamed`: the engine's kind has a config section) with its
 * `upstream` block: a custom model's own, a built-in model's from the top-level `upstream` (its
 * path, else the most specific pattern). An `upstream` key matching no such built-in model, and an
 * `upstream` on a model bound elsewhere, are a ConfigError naming it.
 */
export function namedBindings(
  models: readonly RoutableModel[],
  bindings: EngineBindings,
  isNamed: (engine: string) => boolean,
  upstreams: Readonly<Record<string, UpstreamBinding>>,
  customUpstreams: ReadonlyMap<string, UpstreamBinding>,
): ReadonlyMap<string, NamedBinding> {
  const engineOf = (path: string): string | undefined => {
    const b = bindings.of(path);
    return b?.kind === 'engine' && isNamed(b.engine) ? b.engine : undefined;
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
      // A chain may name a provider further on (docs/routing.md): the block is that engine's.
      if (own && !bindings.chain(m.path)?.engines.some(isNamed)) throw new ConfigError(`${m.custom?.where ?? m.path}.upstream: the model is not bound to a provider; its engine must be "provider:<name>" (or comfyui:, command:)`);
      continue;
    }
    out.set(m.path, { engine, upstream: m.custom ? own : mostSpecific(m.path, upstreams) });
  }
  return out;
}

/** The `upstream` entry for a built-in model: its path, else the most specific pattern matching it. */
export function mostSpecific(path: string, upstreams: Readonly<Record<string, UpstreamBinding>>): UpstreamBinding | undefined {
  if (Object.hasOwn(upstreams, path)) return upstreams[path];
  const matching = Object.keys(upstreams).filter((k) => isGlob(k) && matchesGlob(k, path));
  if (matching.length === 0) return undefined;
  const best = Math.max(...matching.map(globSpecificity));
  const top = matching.filter((k) => globSpecificity(k) === best);
  if (top.length > 1) throw new ConfigError(`upstream: '${top[0]}' and '${top[1]}' both match ${path}, equally specifically; add an entry for ${path} itself`);
  return upstreams[top[0]!];
}
