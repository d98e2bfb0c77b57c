import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { systemClock } from '../lib/clock.js';
import type { Clock } from '../lib/clock.js';
import { buildCatalog } from '../services/catalog/catalog.js';
import { createServices } from '../services/services.js';
import type { Services } from '../services/services.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';

/** Config, store and services, wired the same way for `serve` and `admin`. */
export async function openContext(
  flags: Record<string, unknown>,
  clock: Clock = systemClock,
): Promise<{ config: Config; store: Store; services: Services }> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  const catalog = buildCatalog({ deprecations: config.deprecations });
  let store: Store;
  try {
    store = await openStore(config);
  } catch (err) {
    const where = config.databaseUrl ? 'the PostgreSQL database' : `the store in ${config.dataDir}`;
    throw new ConfigError(`cannot open ${where}: ${(err as Error).message}`);
  }
  const services = createServices(store, catalog, clock, {
    maxConcurrentJobs: config.maxConcurrentJobs,
    maxBackloggedJobs: config.maxBackloggedJobs,
  });
  return { config, store, services };
}
