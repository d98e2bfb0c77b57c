import { ConfigError } from '../config/config.js';
import type { ModelEngines } from '../config/options.js';
import type { EngineChainSpec } from '../config/routing-settings.js';
import { GLOB_SYNTAX, globSpecificity, isGlob, isGlobPattern, matchesGlob } from '../lib/glob.js';

/**
 * What runs a model's jobs: an engine in the worker processes (`local`, `comfyui:gpu`), or the
 * remote workers of a pool (`remote:gpu-a`), which take them over the worker protocol
 * (docs/workers.md). The model module names the default; the config file's `model_engines` may
 * bind a model elsewhere, by its path or by a pattern (`video/*`). This is the one place a model's
 * binding is decided: the engine router, the in-process worker's claims and the worker protocol
 * all ask it.
 */
export type EngineBinding = { readonly kind: 'engine'; readonly engine: string } | { readonly kind: 'remote'; readonly pool: string };

/**
 * A pool of remote workers: not an engine kind (kinds.ts lists those), since no engine of this
 * process runs its models; the worker protocol hands their jobs to the pool's workers.
 */
export const REMOTE_PREFIX = 'remote:';
/** The built-in engine's id (src/engines/local/): it renders the built-in models only. */
export const LOCAL_ENGINE = 'local';
/** An instance name after a kind (`comfyui:gpu`) or a pool (`remote:gpu-a`). */
const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * `remote:<pool>` -> a remote pool; anything else -> an in-process engine: `local`, or an
 * instance of a kind, `<kind>:<name>` (`provider:replicate`, `comfyui:gpu`), whose name is checked
 * here; whether the kind exists and declares the instance is the engine set's check (app/engine-set.ts,
 * against kinds.ts), so this module names no kind. Throws a ConfigError naming `where`.
 */
export function parseBinding(id: string, where: string): EngineBinding {
  const colon = id.indexOf(':');
  if (id.startsWith(REMOTE_PREFIX)) {
    const pool = id.slice(REMOTE_PREFIX.length);
    if (!NAME_RE.test(pool)) throw new ConfigError(`${where}: '${id}' names no pool; a pool is 1 to 63 of a-z, 0-9, _ and -, e.g. remote:gpu-a`);
    return { kind: 'remote', pool };
  }
  if (colon >= 0 && !NAME_RE.test(id.slice(colon + 1))) {
    const kind = id.slice(0, colon);
    throw new ConfigError(`${where}: '${id}' names no ${kind}; a name is 1 to 63 of a-z, 0-9, _ and -, e.g. ${kind}:main`);
  }
  return { kind: 'engine', engine: id };
}

export interface EngineBindings {
  /** The binding of a model that takes requests; undefined for any other job type (node-app jobs run in-process). */
  of(model: string): EngineBinding | undefined;
  /**
   * Where a model's binding comes from, for messages: `model_engines` (its path is a key),
   * `model_engines 'video/*'` (a pattern), or undefined (its module's `engine`).
   */
  origin(model: string): string | undefined;
  /** Models bound to a remote pool: path -> pool. In-process workers claim their jobs only to spill them (`spill`). */
  readonly remote: ReadonlyMap<string, string>;
  /**
   * A model's whole chain (docs/routing.md): its engine ids in order, the first being `of`'s, and
   * how long a job waits for the first before the next may take it. Undefined: no binding.
   */
  chain(model: string): EngineChain | undefined;
  /** Models whose chain starts with a remote pool and spills: path -> spill_after_ms. In-process workers claim their jobs once they have waited that long. */
  readonly spill: ReadonlyMap<string, number>;
}

export interface EngineChain {
  readonly engines: readonly string[];
  readonly spillAfterMs: number | undefined;
}

/** What bindings read of a model: a module or a catalog entry. */
export interface BindableModel {
  readonly path: string;
  readonly engine?: string | undefined;
  /** A custom model's declaration: where, and its own `engine` as a chain (used when no `model_engines` key binds it). */
  readonly custom?: { readonly where: string; readonly chain?: EngineChainSpec | undefined } | undefined;
}

interface Pattern {
  readonly key: string;
  readonly specificity: number;
}

/**
 * The `model_engines` key that binds `model`: its path if it is a key, else the most specific
 * pattern matching it (two equally specific patterns binding it differently are refused).
 */
function keyFor(model: string, overrides: ModelEngines, patterns: readonly Pattern[], chains: Readonly<Record<string, EngineChainSpec>>): string | undefined {
  if (Object.hasOwn(overrides, model)) return model;
  const matching = patterns.filter((p) => matchesGlob(p.key, model));
  if (matching.length === 0) return undefined;
  const best = Math.max(...matching.map((p) => p.specificity));
  const top = matching.filter((p) => p.specificity === best);
  const same = (a: string, b: string) => overrides[a] === overrides[b] && JSON.stringify(chains[a] ?? null) === JSON.stringify(chains[b] ?? null);
  const differ = top.find((p) => !same(p.key, top[0]!.key));
  if (differ) {
    throw new ConfigError(
      `model_engines: '${top[0]!.key}' and '${differ.key}' both match ${model}, equally specifically, and bind it differently; add an entry for ${model} itself`,
    );
  }
  return top[0]!.key;
}

function checkKeys(models: readonly BindableModel[], overrides: ModelEngines): void {
  const runnable = models.filter((m) => m.engine !== undefined).map((m) => m.path);
  for (const key of Object.keys(overrides)) {
    if (isGlob(key)) {
      if (!isGlobPattern(key)) throw new ConfigError(`model_engines: '${key.slice(0, 200)}' is not a pattern; a pattern is ${GLOB_SYNTAX}, e.g. video/*`);
      if (!runnable.some((path) => matchesGlob(key, path))) {
        throw new ConfigError(`model_engines: pattern '${key}' matches no model that takes requests; the models are ${runnable.join(', ')}`);
      }
    } else if (!runnable.includes(key)) {
      throw new ConfigError(`model_engines: unknown model '${key}'; models that take requests are ${runnable.join(', ')}`);
    }
  }
}

/**
 * The bindings of every model that takes requests (`engine` set), with `model_engines` applied: a
 * model's own path first, else the most specific matching pattern, else its module's `engine` (a
 * custom model's own chain). Throws a ConfigError for a key naming no model, a pattern matching
 * none, a malformed pool, a remote pool past a chain's first place or first without
 * `spill_after_ms`, and a custom model bound to `local` anywhere in its chain. Whether an in-process engine exists and can run its models is the
 * engine router's check, in the processes that run jobs.
 */
export function buildBindings(models: readonly BindableModel[], overrides: ModelEngines = {}, chains: Readonly<Record<string, EngineChainSpec>> = {}): EngineBindings {
  const patterns = Object.keys(overrides)
    .filter(isGlob)
    .map((key) => ({ key, specificity: globSpecificity(key) }));
  checkKeys(models, overrides);
  const byModel = new Map<string, EngineBinding>();
  const origins = new Map<string, string>();
  const remote = new Map<string, string>();
  const chainOf = new Map<string, EngineChain>();
  const spill = new Map<string, number>();
  for (const m of models) {
    if (m.engine === undefined) continue;
    const key = keyFor(m.path, overrides, patterns, chains);
    const origin = key === undefined ? undefined : key === m.path ? 'model_engines' : `model_engines '${key}'`;
    const where = key === undefined ? (m.custom ? `${m.custom.where}.engine` : `model ${m.path}`) : `model_engines.${key}`;
    const binding = parseBinding(key === undefined ? m.engine : overrides[key]!, where);
    if (m.custom && binding.kind === 'engine' && binding.engine === LOCAL_ENGINE) throw localRefusal(m.path, m.custom.where, key);
    byModel.set(m.path, binding);
    if (origin) origins.set(m.path, origin);
    if (binding.kind === 'remote') remote.set(m.path, binding.pool);
    const spec = key === undefined ? m.custom?.chain : chains[key];
    const chain: EngineChain = { engines: spec ? spec.engines : [key === undefined ? m.engine : overrides[key]!], spillAfterMs: spec?.spillAfterMs };
    for (const [i, id] of chain.engines.entries()) {
      if (i === 0) continue;
      const link = parseBinding(id, `${where}[${i}]`);
      if (link.kind === 'remote') throw new ConfigError(`${where}: ${id} is not first in its chain; a pool of remote workers can only be a chain's first engine (its workers cannot hand a job back)`);
      if (m.custom && link.engine === LOCAL_ENGINE) throw localRefusal(m.path, m.custom.where, key);
    }
    if (binding.kind === 'remote' && chain.engines.length > 1) {
      if (chain.spillAfterMs === undefined) throw new ConfigError(`${where}: a chain that starts with a remote pool moves on only by spillover; give it "spill_after_ms", e.g. {"engines": ${JSON.stringify(chain.engines)}, "spill_after_ms": 20000}`);
      spill.set(m.path, chain.spillAfterMs);
    }
    chainOf.set(m.path, Object.freeze(chain));
  }
  return Object.freeze({ of: (model: string) => byModel.get(model), origin: (model: string) => origins.get(model), remote, chain: (model: string) => chainOf.get(model), spill });
}

/**
 * The bindings as a chain's link `index` makes them (0: `bindings` itself): each model bound to the
 * engine at that place of its chain, models with shorter chains unbound. The engine set wires the
 * engines of each place as it wires the first (each kind's models, their `upstream` blocks).
 */
export function linkBindings(bindings: EngineBindings, index: number): EngineBindings {
  if (index === 0) return bindings;
  const of = (model: string): EngineBinding | undefined => {
    const id = bindings.chain(model)?.engines[index];
    return id === undefined ? undefined : parseBinding(id, `model_engines (${model})`);
  };
  return Object.freeze({ of, origin: (model: string) => bindings.origin(model), remote: new Map<string, string>(), chain: (model: string) => bindings.chain(model), spill: new Map<string, number>() });
}

function localRefusal(path: string, where: string, key: string | undefined): ConfigError {
  const why = `'${LOCAL_ENGINE}' is the built-in engine, which renders only the built-in models`;
  if (key === undefined) return new ConfigError(`${where}.engine: ${why}; bind a custom model to a pool of remote workers, e.g. "remote:gpu", or to a provider, e.g. "provider:replicate"`);
  if (key === path) return new ConfigError(`model_engines.${path}: ${why}, and ${path} is a custom model (${where}); bind it to a remote pool, e.g. "remote:gpu", or to a provider, e.g. "provider:replicate"`);
  return new ConfigError(`model_engines '${key}' binds the custom model ${where} to ${why}; bind it to a remote pool or a provider with an entry of its own, e.g. "${path}": "remote:gpu"`);
}
