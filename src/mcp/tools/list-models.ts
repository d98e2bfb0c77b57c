import { Type } from '@sinclair/typebox';
import { formatUsd } from '../../domain/money.js';
import { OUTPUT_KINDS } from '../../models/model.js';
import { StringEnum } from '../../models/schema-kit.js';
import { ModelDeprecation, ModelView } from '../../services/catalog/models.js';
import type { ModelPrice } from '../../services/catalog/models.js';
import { defineTool } from '../tool.js';

/** `30000` → `$0.03`, `451500` → `$0.4515`: at least cents, no trailing zeros past them. */
export function usdWords(micros: number): string {
  return `$${formatUsd(micros).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** The rule and its amounts in one line: `$0.03 text to image, $0.035 style references; per request: ...`. */
export function priceWords(price: ModelPrice): string {
  const names = Object.keys(price.rates_micro_usd).map((name) => name.replace(/_/g, ' '));
  const rates = Object.values(price.rates_micro_usd).map((micros, i) => `${usdWords(micros)} ${names[i]}`);
  // A single rate named as its rule (`per request`) says it all.
  return names.length === 1 && names[0] === price.description ? rates[0]! : `${rates.join(', ')}; ${price.description}`;
}

const ListedModel = Type.Object(
  {
    id: ModelView.properties.id,
    kind: ModelView.properties.kind,
    description: ModelView.properties.description,
    available: Type.Boolean({ description: 'Whether generate takes requests for it now; false for a model past its sunset (generate answers model_unavailable)' }),
    price: Type.Optional(Type.String({ description: 'What a completed job costs, in words: each rate in USD, then the rule choosing between them' })),
    deprecation: Type.Optional(ModelDeprecation),
  },
  { additionalProperties: false },
);

export const listModels = defineTool({
  name: 'list_models',
  title: 'List models',
  description:
    'Every model this server offers, retired ones included: its id (pass it to get_model_schema and generate), kind, what it does, ' +
    'whether it takes requests now, its price in words, and for a deprecated model a `deprecation` object (sunset date, replacement, ' +
    'migration link). A model past its sunset is listed with available false. Filter by kind if you like.',
  input: Type.Object(
    { kind: Type.Optional(StringEnum(OUTPUT_KINDS, { description: 'Only models that make this kind of output' })) },
    { additionalProperties: false },
  ),
  output: Type.Object({ items: Type.Array(ListedModel, { description: 'Models in catalog order' }) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const items = deps.models
      .list(ctx.publicUrl)
      .items.filter((m) => input.kind === undefined || m.kind === input.kind)
      .map((m) => ({
        id: m.id,
        kind: m.kind,
        description: m.description,
        available: m.available,
        ...(m.price ? { price: priceWords(m.price) } : {}),
        ...(m.deprecation ? { deprecation: m.deprecation } : {}),
      }));
    return { structured: { items } };
  },
});
