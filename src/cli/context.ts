import { createRuntime } from '../app/runtime.js';
import type { Runtime, RuntimeOverrides } from '../app/runtime.js';
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { SQLITE_FILE, storeExists } from '../store/open-store.js';

export interface OpenOptions {
  /**
   * Refuse a --data-dir or --database-url that holds no store instead of creating one there (every
   * admin command but `workspace create`): a typo must not leave a fresh, empty store behind.
   */
  readonly existingStore?: boolean;
}

/**
 * The config of `serve` and `admin` flags (with the config file and environment), built into a
 * runtime. The bench passes an engine of its own; everything else comes from the config.
 */
export async function openRuntime(flags: Record<string, unknown>, overrides: RuntimeOverrides = {}, opts: OpenOptions = {}): Promise<Runtime> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  if (opts.existingStore) await refuseMissingStore(config);
  return createRuntime(config, overrides);
}

async function refuseMissingStore(config: Config): Promise<void> {
  let found: boolean;
  try {
    found = await storeExists(config);
  } catch (err) {
    throw new ConfigError(`cannot open the PostgreSQL database: ${(err as Error).message}`);
  }
  if (found) return;
  // The URL is not repeated: it may hold a password.
  const where = config.databaseUrl
    ? 'the PostgreSQL database holds no mediagen store (no migrations table); check --database-url'
    : `no mediagen store in ${config.dataDir} (no ${SQLITE_FILE} there); check --data-dir`;
  throw new ConfigError(`${where}, or create a store with 'mediagen admin workspace create' or 'mediagen serve'`);
}
