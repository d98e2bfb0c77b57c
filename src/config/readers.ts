import { parseUsd } from '../domain/money.js';
import type { MicroUsd } from '../domain/money.js';

/**
 * What the config's readers share: the error every refusal of a setting is, and the readers of
 * values more than one section of the config file takes (config.ts re-exports ConfigError).
 */

/** A setting that stops the start; its message names the setting as the user wrote it. */
export class ConfigError extends Error {}

/** A USD amount as the config file gives it: a decimal string (or number) with at most 6 places, in micro-USD. */
export function readUsd(raw: unknown, where: string): MicroUsd {
  const micros = typeof raw === 'string' || typeof raw === 'number' ? parseUsd(String(raw)) : undefined;
  if (micros === undefined) {
    throw new ConfigError(`${where} must be a USD amount such as "0.035" (at most 6 decimal places), got ${JSON.stringify(raw)}`);
  }
  return micros;
}
