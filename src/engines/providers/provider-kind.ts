import { isPlainObject } from '../../lib/plain-object.js';
import type { EngineBuildOptions, EngineKind, KindWiring } from '../engine-kind.js';
import type { UpstreamDescription } from '../engine.js';
import { PROVIDER_PREFIX, resolveProviderRoutes } from './provider-bindings.js';
import type { ProviderRoute } from './provider-bindings.js';
import type { ProviderEngine } from './provider-engine.js';

/** Each model bound to a `provider:<name>` engine with its provider and mapping, checked (provider-bindings.ts). */
const routesOf = (w: KindWiring): ReadonlyMap<string, ProviderRoute> => resolveProviderRoutes(w.catalog.entries, w.bindings, w.config.providers, w.bound);

/**
 * Statuses the adapters spell for a provider job that ended, for a state stored before the engine
 * kept the mapped `phase` (0.x rows): Replicate's, fal's, OpenAI's and krea's.
 */
const FINAL_SPELLINGS = new Set(['succeeded', 'failed', 'canceled', 'cancelled', 'completed', 'COMPLETED', 'not_found']);

/** The provider engine's state ({handle, status, phase, usage}: provider-engine.ts) as a job's details show it. */
export function describeProviderState(state: Readonly<Record<string, unknown>>): UpstreamDescription {
  const status = typeof state.status === 'string' ? state.status : null;
  const usage = isPlainObject(state.usage) ? (state.usage as Record<string, number | string>) : null;
  const phase = state.phase;
  const final = typeof phase === 'string' ? phase === 'succeeded' || phase === 'failed' || phase === 'cancelled' : status !== null && FINAL_SPELLINGS.has(status);
  return { status, usage, final };
}

/** The provider engines of a wiring: the kind's build, and the API process's webhook receiver (app/runtime.ts). */
export async function providerEngines(w: KindWiring, opts: EngineBuildOptions): Promise<ProviderEngine[]> {
  return (await import('./provider-build.js')).buildProviderEngines(w.config, w.catalog, routesOf(w), opts);
}

/**
 * Hosted providers (docs/providers.md): the config's `providers`, each an engine bound as
 * `provider:<name>`. Start-up checks each binding's provider and mapping; the provider's key is
 * checked when the config is read, and the provider itself is not called at start, as `/readyz`
 * does not call it: a server's start must not depend on a third party.
 */
export const PROVIDER_KIND: EngineKind = {
  name: PROVIDER_PREFIX.slice(0, -1),
  section: { key: 'providers', names: (config) => config.providers.map((p) => p.name) },
  check: (w) => void routesOf(w),
  build: providerEngines,
  describe: describeProviderState,
};
