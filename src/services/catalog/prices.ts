import type { MicroUsd } from '../../domain/money.js';

/**
 * The price table of spec section 8, as data: each model has named rates in integer micro-USD and
 * one rule that combines them with the request. Every price the service charges is computed here
 * and nowhere else; the config file's `prices` may replace any rate (docs/config.md).
 */
type Req = Readonly<Record<string, unknown>>;
export type Rates = Readonly<Record<string, MicroUsd>>;

interface PriceRule {
  readonly rates: Rates;
  /** What the rates mean, for docs and error messages. */
  readonly unit: string;
  readonly price: (rates: Rates, request: Req) => MicroUsd;
}

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/** model-a-2: text-to-image, or with style references, or with moodboards (moodboards win). */
const modelA2 = (text_to_image: MicroUsd, style_references: MicroUsd, moodboards: MicroUsd): PriceRule => ({
  rates: { text_to_image, style_references, moodboards },
  unit: 'per request',
  price: (r, q) => (count(q.moodboards) > 0 ? r.moodboards! : count(q.image_style_references) > 0 ? r.style_references! : r.text_to_image!),
});

export const PRICE_RULES: Readonly<Record<string, PriceRule>> = Object.freeze({
  'image/vendor-a/model-a-2/medium': modelA2(30_000, 35_000, 40_000),
  'image/vendor-a/model-a-2/large': modelA2(60_000, 65_000, 70_000),
  'image/vendor-a/model-a-2/medium-turbo': modelA2(15_000, 17_500, 20_000),
  'image/vendor-b/model-b-1': {
    rates: { standard: 40_400, max: 100_000, per_style_image: 3_000 },
    unit: "per request: the mode's rate plus per_style_image for each style_images item",
    price: (r, q) => (q.mode === 'max' ? r.max! : r.standard!) + r.per_style_image! * count(q.style_images),
  },
  'video/vendor-d/model-d-fast': {
    rates: { per_second: 105_000, per_second_with_audio: 157_500 },
    unit: 'per second of duration',
    price: (r, q) => (q.generate_audio === true ? r.per_second_with_audio! : r.per_second!) * Number(q.duration),
  },
  'video/vendor-e/model-e-1': {
    rates: { std_per_second: 22_100, pro_per_second: 77_200 },
    unit: "per second of duration at the mode's rate",
    price: (r, q) => (q.mode === 'pro' ? r.pro_per_second! : r.std_per_second!) * Number(q.duration),
  },
  'video/vendor-f/model-f': { rates: { per_request: 451_500 }, unit: 'per request', price: (r) => r.per_request! },
  // The spec shows no price for model-c-edit; docs/decisions.md records this choice.
  'video/vendor-c/model-c-edit': { rates: { per_request: 500_000 }, unit: 'per request', price: (r) => r.per_request! },
});

/** The prices in force: the rules above with the config file's rates applied. */
export interface PriceTable {
  /** The price of one request, or undefined for a model without a price (a retired one). */
  priceOf(model: string, request: Req): MicroUsd | undefined;
  rates(model: string): Rates | undefined;
}

export class PriceError extends Error {}

/** Config `prices`: model path -> rate name -> micro-USD. Unknown models and rates are refused. */
export type PriceOverrides = Readonly<Record<string, Readonly<Record<string, MicroUsd>>>>;

export function buildPriceTable(overrides: PriceOverrides = {}): PriceTable {
  const rates = new Map<string, Rates>(Object.entries(PRICE_RULES).map(([m, rule]) => [m, rule.rates]));
  for (const [model, given] of Object.entries(overrides)) {
    const base = rates.get(model);
    if (!base) throw new PriceError(`prices: unknown model '${model}'; priced models are ${[...rates.keys()].join(', ')}`);
    for (const name of Object.keys(given)) {
      if (!(name in base)) throw new PriceError(`prices.${model}: unknown rate '${name}'; its rates are ${Object.keys(base).join(', ')}`);
    }
    rates.set(model, Object.freeze({ ...base, ...given }));
  }
  return Object.freeze({
    priceOf: (model: string, request: Req) => {
      const rule = PRICE_RULES[model];
      const price = rule?.price(rates.get(model)!, request);
      if (price !== undefined && !Number.isSafeInteger(price)) throw new PriceError(`price of ${model} is not whole micro-USD`);
      return price;
    },
    rates: (model: string) => rates.get(model),
  });
}
