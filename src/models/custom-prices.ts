import { ConfigError } from '../config/readers.js';
import type { CustomPriceDecl } from '../config/custom-model-settings.js';
import { isPlainObject } from '../lib/plain-object.js';
import type { PriceRule, PricedRequest, Rates } from './model.js';

/**
 * A custom model's price rule (docs/config.md, "Prices of custom models"): one named rate, so the
 * config's `prices` can replace it like any built-in rate, times what the request asks for. A
 * field a price reads must be a number or integer property of the request schema with a minimum
 * of at least 0 and a maximum, required or with a default: every valid request then has a price,
 * and no request can cost more than the rule at the fields' maxima.
 */

type Json = Record<string, unknown>;

/**
 * ⌈product of `factors` / `divisor`⌉, as whole micro-USD. Exact for integers (BigInt); a
 * fractional field (a `number` of seconds) is first rounded to 6 decimal places, so binary
 * fractions (0.1 × 3) do not add a micro-USD.
 */
export function ceilProduct(factors: readonly number[], divisor = 1): number {
  if (factors.every(Number.isSafeInteger)) {
    const n = factors.reduce((p, f) => p * BigInt(f), 1n);
    const d = BigInt(divisor);
    return Number((n + d - 1n) / d);
  }
  return Math.ceil(Number((factors.reduce((p, f) => p * f, 1) / divisor).toFixed(6)));
}

const amount = (request: PricedRequest, field: string): number => {
  const v = request[field];
  return typeof v === 'number' ? v : 0;
};

/** The largest value the priced field `name` takes; or a ConfigError naming what it lacks. */
function pricedField(schema: Json, name: string, at: string, integer: boolean): number {
  const props = isPlainObject(schema.properties) ? schema.properties : {};
  const field = props[name];
  const where = `${at}: '${name}'`;
  if (!isPlainObject(field)) throw new ConfigError(`${where} is not a property of the request schema`);
  const types = integer ? ['integer'] : ['integer', 'number'];
  if (typeof field.type !== 'string' || !types.includes(field.type)) throw new ConfigError(`${where} must have "type": ${types.map((t) => `"${t}"`).join(' or ')}`);
  const min = typeof field.minimum === 'number' ? field.minimum : field.exclusiveMinimum;
  if (typeof min !== 'number' || min < 0) throw new ConfigError(`${where} needs a "minimum" of at least 0, so no request has a negative price`);
  const max = typeof field.maximum === 'number' ? field.maximum : field.exclusiveMaximum;
  if (typeof max !== 'number') throw new ConfigError(`${where} needs a "maximum", so every request has a bounded price`);
  const required = Array.isArray(schema.required) && schema.required.includes(name);
  if (!required && field.default === undefined) throw new ConfigError(`${where} must be required or have a default, so every request has a price`);
  return max;
}

/**
 * The price rule of the custom model labelled `where`, its fields checked against its (completed)
 * request schema, and its most expensive request checked to be a whole number of micro-USD.
 */
export function customPriceRule(decl: CustomPriceDecl, schema: Json, where: string): PriceRule {
  const at = `${where}.price`;
  let rule: PriceRule;
  let most: (rates: Rates) => number;
  switch (decl.rule) {
    case 'fixed':
      rule = { rates: { fixed: decl.rate }, unit: 'per request', price: (r) => r.fixed! };
      most = (r) => r.fixed!;
      break;
    case 'per_second': {
      const { field } = decl;
      const max = pricedField(schema, field, `${at}.field`, false);
      rule = { rates: { per_second: decl.rate }, unit: `per second of ${field}`, price: (r, q) => ceilProduct([r.per_second!, amount(q, field)]) };
      most = (r) => ceilProduct([r.per_second!, max]);
      break;
    }
    case 'per_megapixel': {
      const { widthField: w, heightField: h } = decl;
      const maxW = pricedField(schema, w, `${at}.width_field`, false);
      const maxH = pricedField(schema, h, `${at}.height_field`, false);
      rule = {
        rates: { per_megapixel: decl.rate },
        unit: `per megapixel of ${w} x ${h} (${w} x ${h} / 1,000,000 times per_megapixel, rounded up to a whole micro-USD)`,
        price: (r, q) => ceilProduct([r.per_megapixel!, amount(q, w), amount(q, h)], 1_000_000),
      };
      most = (r) => ceilProduct([r.per_megapixel!, maxW, maxH], 1_000_000);
      break;
    }
    case 'per_output': {
      const { countField } = decl;
      if (countField === undefined) {
        rule = { rates: { per_output: decl.rate }, unit: 'per output (one per request)', price: (r) => r.per_output! };
        most = (r) => r.per_output!;
        break;
      }
      const max = pricedField(schema, countField, `${at}.count_field`, true);
      rule = { rates: { per_output: decl.rate }, unit: `per output: per_output times ${countField}`, price: (r, q) => ceilProduct([r.per_output!, amount(q, countField)]) };
      most = (r) => ceilProduct([r.per_output!, max]);
      break;
    }
  }
  if (!Number.isSafeInteger(most(rule.rates))) throw new ConfigError(`${at}: the most a request can cost (at the fields' maxima) is past any amount this server can hold; lower the rate or the maxima`);
  return Object.freeze({ ...rule, maxPrice: most });
}
