import { ConfigError } from '../config/config.js';
import type { ModelEngines } from '../config/options.js';

/**
 * What runs a model's jobs: an engine in the worker processes (`local`), or the remote workers of
 * a pool (`remote:gpu-a`), which take them over the worker protocol (docs/workers.md). The model
 * module names the default; the config file's `model_engines` may bind a model elsewhere.
 */
export type EngineBinding = { readonly kind: 'engine'; readonly engine: string } | { readonly kind: 'remote'; readonly pool: string };

export const REMOTE_PREFIX = 'remote:';
const POOL_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** `local` -> an in-process engine; `remote:<pool>` -> a remote pool. Throws a ConfigError naming `where`. */
export function parseBinding(id: string, where: string): EngineBinding {
  if (!id.startsWith(REMOTE_PREFIX)) return { kind: 'engine', engine: id };
  const pool = id.slice(REMOTE_PREFIX.length);
  if (!POOL_RE.test(pool)) throw new ConfigError(`${where}: '${id}' names no pool; a pool is 1 to 63 of a-z, 0-9, _ and -, e.g. remote:gpu-a`);
  return { kind: 'remote', pool };
}

export interface EngineBindings {
  /** The binding of a model that takes requests; undefined for any other job type (node-app jobs run in-process). */
  of(model: string): EngineBinding | undefined;
  /** Models bound to a remote pool: path -> pool. In-process workers never claim their jobs. */
  readonly remote: ReadonlyMap<string, string>;
}

/** The bindings of every model that takes requests (`engine` set), with `model_engines` applied. */
export function buildBindings(models: readonly { readonly path: string; readonly engine?: string | undefined }[], overrides: ModelEngines = {}): EngineBindings {
  const byModel = new Map<string, EngineBinding>();
  const remote = new Map<string, string>();
  for (const m of models) {
    if (m.engine === undefined) continue;
    const given = overrides[m.path];
    const binding = parseBinding(given ?? m.engine, given !== undefined ? `model_engines.${m.path}` : `model ${m.path}`);
    byModel.set(m.path, binding);
    if (binding.kind === 'remote') remote.set(m.path, binding.pool);
  }
  return Object.freeze({ of: (model: string) => byModel.get(model), remote });
}
