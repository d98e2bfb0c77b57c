import { createRuntime } from '../app/runtime.js';
import type { Runtime, RuntimeOverrides } from '../app/runtime.js';
import { loadConfig } from '../config/config.js';

/**
 * The config of `serve` and `admin` flags (with the config file and environment), built into a
 * runtime. The bench passes an engine of its own; everything else comes from the config.
 */
export async function openRuntime(flags: Record<string, unknown>, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  return createRuntime(config, overrides);
}
