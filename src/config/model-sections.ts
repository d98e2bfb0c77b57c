import type { MicroUsd } from '../domain/money.js';
import { isPlainObject } from '../lib/plain-object.js';
import { ConfigError, readUsd } from './readers.js';

/** `model_engines`: model path or pattern -> engine id or `remote:<pool>` (a non-empty string). */
export function readModelEngines(raw: unknown, file: string): Record<string, string> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${file}: model_engines must be an object of model path or pattern to engine id`);
  }
  for (const [model, id] of Object.entries(raw)) {
    if (typeof id !== 'string' || id === '') throw new ConfigError(`${file}: model_engines.${model} must be an engine id such as "local" or a remote pool such as "remote:gpu"`);
  }
  return { ...(raw as Record<string, string>) };
}

/** `prices`: {model path: {rate: USD}}, each USD a decimal string (or number) with at most 6 places. */
export function readPrices(raw: unknown, file: string): Record<string, Record<string, MicroUsd>> {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: prices must be an object of model path to {rate: USD}`);
  return Object.fromEntries(
    Object.entries(raw).map(([model, rates]) => {
      if (!isPlainObject(rates)) throw new ConfigError(`${file}: prices.${model} must be an object of rate name to USD`);
      return [
        model,
        Object.fromEntries(
          Object.entries(rates).map(([name, usd]) => [name, readUsd(usd, `${file}: prices.${model}.${name}`)]),
        ),
      ];
    }),
  );
}
