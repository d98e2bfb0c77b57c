import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { systemClock } from '../lib/clock.js';
import type { Clock } from '../lib/clock.js';
import { buildCatalog } from '../models/catalog.js';
import type { Catalog } from '../models/catalog.js';
import { PriceError, buildPriceTable } from '../models/prices.js';
import type { PriceTable } from '../models/prices.js';
import type { RunPolicy } from '../services/job-runs.js';
import { createServices } from '../services/services.js';
import type { Services } from '../services/services.js';
import { OutputFiles } from '../store/files/output-files.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';

/** A job is given this many claims; a worker dying more often than that on one job gives up on it. */
export const MAX_ATTEMPTS = 3;

/** Where job outputs live inside the data dir. */
export const OUTPUTS_DIR = 'outputs';

export function runPolicyFor(config: Config, catalog: Catalog): RunPolicy {
  for (const model of Object.keys(config.modelTimeoutsMs)) {
    if (!catalog.get(model)?.request) throw new ConfigError(`job_timeouts_ms: unknown model '${model}'`);
  }
  return {
    leaseMs: config.leaseMs,
    maxAttempts: MAX_ATTEMPTS,
    maxFaultRetries: config.maxFaultRetries,
    timeoutMs: (model) => config.modelTimeoutsMs[model] ?? config.jobTimeoutMs,
  };
}

/** The spec's prices with the config file's `prices` applied; a typo in a model or rate name is a config error. */
export function priceTableFor(config: Config): PriceTable {
  try {
    return buildPriceTable(config.prices);
  } catch (err) {
    if (err instanceof PriceError) throw new ConfigError(err.message);
    throw err;
  }
}

/** Config, store and services, wired the same way for `serve` and `admin`. */
export async function openContext(
  flags: Record<string, unknown>,
  clock: Clock = systemClock,
): Promise<{ config: Config; store: Store; services: Services }> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  const catalog = buildCatalog({ deprecations: config.deprecations });
  const runPolicy = runPolicyFor(config, catalog);
  const prices = priceTableFor(config);
  let store: Store;
  try {
    store = await openStore(config);
  } catch (err) {
    const where = config.databaseUrl ? 'the PostgreSQL database' : `the store in ${config.dataDir}`;
    throw new ConfigError(`cannot open ${where}: ${(err as Error).message}`);
  }
  const services = createServices(store, catalog, clock, {
    limits: { maxConcurrentJobs: config.maxConcurrentJobs, maxBackloggedJobs: config.maxBackloggedJobs },
    outputs: new OutputFiles(join(config.dataDir, OUTPUTS_DIR)),
    runPolicy,
    prices,
    storage: { dir: config.dataDir, minFreeBytes: config.minFreeDiskBytes },
  });
  return { config, store, services };
}
