import { ConfigError } from '../../config/readers.js';
import type { ProviderSettings, UpstreamBinding } from '../../config/provider-settings.js';
import { providerType } from '../../config/provider-types.js';
import type { EngineBindings } from '../bindings.js';
import type { NamedBinding, RoutableModel } from '../named-bindings.js';

/** How a model names a provider's engine: `provider:<name>` (provider-kind.ts). */
export const PROVIDER_PREFIX = 'provider:';

/** A model bound to a provider, with how it maps onto it. */
export interface ProviderRoute {
  readonly provider: ProviderSettings;
  readonly upstream: UpstreamBinding;
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
  named: ReadonlyMap<string, NamedBinding>,
): ReadonlyMap<string, ProviderRoute> {
  const byName = new Map(providers.map((p) => [p.name, p]));
  const routes = new Map<string, ProviderRoute>();
  for (const [path, { engine, upstream }] of named) {
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
