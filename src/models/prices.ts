import type { MicroUsd } from '../domain/money.js';
import type { Usage } from '../domain/usage.js';
import type { ModelModule, PriceRule, PricedRequest, Rates } from './model.js';
import { MODELS } from './registry.js';

export type { Rates } from './model.js';

/**
 * The price table of spec section 8 in force: each model's rule (in its module, models/<kind>/)
 * with the config file's `prices` applied to its named rates (docs/config.md). Every price the
 * service charges is computed here and nowhere else.
 */

/** Model path -> its price rule, for every model that takes requests. */
export const PRICE_RULES: Readonly<Record<string, PriceRule>> = priceRulesOf(MODELS);

/** What the table reads of a model: a module, or a catalog entry. */
type Priced = Pick<ModelModule, 'path' | 'price'>;

function priceRulesOf(models: readonly Priced[]): Readonly<Record<string, PriceRule>> {
  return Object.freeze(Object.fromEntries(models.flatMap((m) => (m.price ? [[m.path, m.price] as const] : []))));
}

/** The prices in force: the rules above with the config file's rates applied. */
export interface PriceTable {
  /** The price of one request, or undefined for a model without a price (a retired one). */
  priceOf(model: string, request: PricedRequest): MicroUsd | undefined;
  /**
   * What a completed job of a metered model is charged for what it made; undefined for a model
   * priced up front (its job is charged its price, the hold).
   */
  chargeOf(model: string, request: PricedRequest, usage: Usage): MicroUsd | undefined;
  rates(model: string): Rates | undefined;
}

export class PriceError extends Error {}

/** Config `prices`: model path -> rate name -> micro-USD. Unknown models and rates are refused. */
export type PriceOverrides = Readonly<Record<string, Readonly<Record<string, MicroUsd>>>>;

/** The table of `models` (the registry's by default; the runtime gives its catalog's, custom models included). */
export function buildPriceTable(overrides: PriceOverrides = {}, models: readonly Priced[] = MODELS): PriceTable {
  const rules = models === MODELS ? PRICE_RULES : priceRulesOf(models);
  const rates = new Map<string, Rates>(Object.entries(rules).map(([m, rule]) => [m, rule.rates]));
  for (const [model, given] of Object.entries(overrides)) {
    const base = rates.get(model);
    if (!base) throw new PriceError(`prices: unknown model '${model}'; priced models are ${[...rates.keys()].join(', ')}`);
    for (const name of Object.keys(given)) {
      if (!(name in base)) throw new PriceError(`prices.${model}: unknown rate '${name}'; its rates are ${Object.keys(base).join(', ')}`);
    }
    const replaced = Object.freeze({ ...base, ...given });
    const most = rules[model]!.maxPrice?.(replaced);
    if (most !== undefined && !Number.isSafeInteger(most)) {
      throw new PriceError(`prices.${model}: with these rates the most a request can cost (at its fields' maxima) is past any amount this server can hold; lower the rate`);
    }
    rates.set(model, replaced);
  }
  const whole = (amount: MicroUsd | undefined, what: string) => {
    if (amount !== undefined && !Number.isSafeInteger(amount)) throw new PriceError(`${what} is not whole micro-USD`);
    return amount;
  };
  return Object.freeze({
    priceOf: (model: string, request: PricedRequest) => whole(rules[model]?.price(rates.get(model)!, request), `price of ${model}`),
    // Never more than the price, which is what the job holds: a huge measured usage cannot overflow it.
    chargeOf: (model: string, request: PricedRequest, usage: Usage) => {
      const rule = rules[model];
      const charge = rule?.charge?.(rates.get(model)!, request, usage);
      return charge === undefined ? undefined : whole(Math.min(charge, rule!.price(rates.get(model)!, request)), `charge of ${model}`);
    },
    rates: (model: string) => rates.get(model),
  });
}
