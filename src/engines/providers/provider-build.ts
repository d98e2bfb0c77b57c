import type { Config } from '../../config/config.js';
import type { ProviderRoute } from './provider-bindings.js';
import { ProviderEngine } from './provider-engine.js';
import type { ProviderMeter, ProviderModel } from './provider-engine.js';
import type { UpstreamNudges } from './upstream-nudges.js';
import { ADAPTERS } from './adapters.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { createGuardedDispatcher } from '../../lib/safe-fetch.js';
import type { Catalog } from '../../models/catalog.js';
import { mainOutputTypes } from '../../models/model.js';

export interface ProviderEngineOptions {
  readonly clock: Clock;
  readonly nudges: UpstreamNudges;
  readonly meter?: ProviderMeter;
  readonly log?: Log;
}

/**
 * One engine per provider that some model is bound to (docs/providers.md), each knowing its
 * models' mappings, media fields and output types. Webhooks are asked for only where `public_url`
 * says how the provider can reach this server.
 */
export function buildProviderEngines(config: Config, catalog: Catalog, routes: ReadonlyMap<string, ProviderRoute>, opts: ProviderEngineOptions): ProviderEngine[] {
  return config.providers.flatMap((provider) => {
    const models = new Map<string, ProviderModel>();
    for (const [path, route] of routes) {
      const entry = catalog.get(path);
      if (route.provider.name !== provider.name || !entry) continue;
      models.set(path, { route, endpoint: entry.route ?? `/generate/${path}`, schema: entry.request, outputTypes: mainOutputTypes(entry) });
    }
    if (models.size === 0) return [];
    return [
      new ProviderEngine({
        provider,
        adapter: ADAPTERS[provider.type],
        models,
        clock: opts.clock,
        // Its own, so the engine's close() ends its connections and no other's.
        guarded: createGuardedDispatcher({ allowPrivate: config.allowPrivateUrls }),
        outputMaxBytes: config.workerOutputMaxBytes,
        ...(config.publicUrl ? { webhookUrl: `${config.publicUrl}/providers/${provider.name}/webhook` } : {}),
        nudges: opts.nudges,
        ...(opts.meter ? { meter: opts.meter } : {}),
        ...(opts.log ? { log: opts.log } : {}),
      }),
    ];
  });
}
