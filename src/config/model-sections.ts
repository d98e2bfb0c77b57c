import type { MicroUsd } from '../domain/money.js';
import { isPlainObject } from '../lib/plain-object.js';
import { ConfigError, readUsd } from './readers.js';

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
