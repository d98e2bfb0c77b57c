import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatUsd } from '../../domain/money.js';
import type { BillingService } from '../billing/billing.js';
import type { ModelRequests } from './model-requests.js';

const QUOTE_EXAMPLE = {
  model: 'image/vendor-a/model-a-2/medium',
  price_micro_usd: 30_000,
  price_usd: '0.030000',
  metered: false,
  description: 'per request: moodboards when moodboards is non-empty, else style_references when image_style_references is non-empty, else text_to_image',
};

export const PriceQuote = Type.Object(
  {
    model: Type.String({ description: 'The model id (its path; the job type)', examples: [QUOTE_EXAMPLE.model] }),
    price_micro_usd: Type.Integer({ minimum: 0, description: 'The price of this request in integer micro-USD (1 USD = 1,000,000): what its job would hold', examples: [QUOTE_EXAMPLE.price_micro_usd] }),
    price_usd: Type.String({ pattern: '^\\d+\\.\\d{6}$', description: 'The same in USD with six decimal places', examples: [QUOTE_EXAMPLE.price_usd] }),
    metered: Type.Boolean({
      description: 'Whether the charge depends on what the job makes: the price is then the most it can cost, and it is charged what it made (never more)',
      examples: [false],
    }),
    description: Type.String({ description: "The model's price rule in words, as GET /models shows it", examples: [QUOTE_EXAMPLE.description] }),
  },
  { $id: 'PriceQuote', additionalProperties: false, description: 'What a request would cost, before it is sent', examples: [QUOTE_EXAMPLE] },
);
export type PriceQuote = Static<typeof PriceQuote>;

/**
 * POST /models/{id}/quote: the price of a request from the catalog's price rule, the number the
 * job's admission would hold. The body is checked as its creation checks it (ModelRequests); the
 * checks that depend on the world (asset and style ids, private URLs, the balance, the limits)
 * are the creation's. Nothing is stored and no input is fetched.
 */
export class QuoteService {
  readonly #requests: ModelRequests;
  readonly #billing: BillingService;

  constructor(requests: ModelRequests, billing: BillingService) {
    this.#requests = requests;
    this.#billing = billing;
  }

  /** A retired or sunset model is model_unavailable (410), an unknown one not_found. */
  available(model: string, publicUrl: string): void {
    this.#requests.available(model, publicUrl);
  }

  quote(model: string, body: unknown, publicUrl: string): PriceQuote {
    const entry = this.#requests.available(model, publicUrl);
    const request = this.#requests.checkedBody(entry, body);
    const price = this.#billing.priceOf(entry.path, request);
    return {
      model: entry.path,
      price_micro_usd: price,
      price_usd: formatUsd(price),
      metered: entry.price?.charge !== undefined,
      description: entry.price!.unit,
    };
  }
}
