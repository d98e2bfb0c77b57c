import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { systemClock } from '../lib/clock.js';
import type { Clock } from '../lib/clock.js';
import { buildCatalog } from '../services/catalog/catalog.js';
import { createServices } from '../services/services.js';
import type { Services } from '../services/services.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';

export const DB_FILE = 'mediagen.db';

/** Config, store and services, wired the same way for `serve` and `admin`. */
export async function openContext(
  flags: Record<string, unknown>,
  clock: Clock = systemClock,
): Promise<{ config: Config; store: Store; services: Services }> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  const catalog = buildCatalog({ deprecations: config.deprecations });
  const store = await openSqliteStore(join(config.dataDir, DB_FILE));
  const services = createServices(store, catalog, clock, {
    maxConcurrentJobs: config.maxConcurrentJobs,
    maxBackloggedJobs: config.maxBackloggedJobs,
  });
  return { config, store, services };
}
