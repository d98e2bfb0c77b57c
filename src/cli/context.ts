import { createRuntime } from '../app/runtime.js';
import type { Runtime } from '../app/runtime.js';
import { loadConfig } from '../config/config.js';
import type { Clock } from '../lib/clock.js';

/** The config of `serve` and `admin` flags (with the config file and environment), built into a runtime. */
export async function openRuntime(flags: Record<string, unknown>, clock?: Clock): Promise<Runtime> {
  const config = loadConfig({ flags, configFile: flags.config as string | undefined });
  return createRuntime(config, clock ? { clock } : {});
}
