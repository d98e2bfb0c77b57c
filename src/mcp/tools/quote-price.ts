import { Type } from '@sinclair/typebox';
import { PriceQuote } from '../../services/catalog/quotes.js';
import { defineTool } from '../tool.js';
import { ModelId, ModelInput } from './get-model-schema.js';

/** POST /models/{id}/quote as a tool: what generate would hold for this input, before it is sent. */
export const quotePrice = defineTool({
  name: 'quote_price',
  title: 'Quote the price of a generation',
  description:
    "What generate would charge for this model and input, from the model's price rule: in micro-USD and USD, and whether the charge " +
    'depends on what the job makes (then the price is the most it can cost). The input is checked as generate checks it, so an ' +
    'invalid one is refused with the same message; nothing is created or charged, and the balance and limits are not checked.',
  input: Type.Object(
    {
      model: ModelId,
      input: ModelInput,
    },
    { additionalProperties: false },
  ),
  output: PriceQuote,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    return { structured: deps.quotes.quote(input.model, input.input, ctx.publicUrl) };
  },
});
