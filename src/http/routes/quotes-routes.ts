import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';
import { PriceQuote } from '../../services/catalog/quotes.js';
import type { QuoteService } from '../../services/catalog/quotes.js';
import { NoQuery, SunsetBody, errorResponses } from '../openapi/common-schemas.js';

const EXAMPLE_BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };

const QuoteRequest = Type.Record(Type.String(), Type.Unknown(), {
  $id: 'QuoteRequest',
  description:
    "A request body of the model, as its generation endpoint takes it (the model's `request_schema` in GET /models; " +
    'POST /styles/train\'s body for `loraTraining`)',
  examples: [EXAMPLE_BODY],
});

const DESCRIPTION =
  'What a request would cost, before it is sent: the price its job would hold when admitted, from the model\'s price rule ' +
  'with the rates in force. The body is checked exactly as the model\'s generation endpoint checks it (400 naming the ' +
  'field); checks that depend on stored data (asset and style ids, the balance, the limits) and literal private URLs are ' +
  'left to the creation. Nothing is created or held and no input URL is fetched. The id is percent-encoded as one path ' +
  'segment (`image%2Fvendor-a%2Fmodel-a-2%2Fmedium`), as for GET /models/{id}. A retired model answers 410 like its ' +
  'generation endpoint. `metered`: the job is charged what it makes, at most this price.';

const QUOTE = '/quote';

/**
 * POST /models/{id}/quote. Like GET /models/{id}, served twice: at `/models/:id/quote` (the id one
 * percent-encoded segment: the OpenAPI form) and at `/models/*` ending in `/quote` (its slashes as
 * they are, hidden from the document). Needs a token, as a creation would.
 */
export function registerQuoteRoutes(fastify: FastifyInstance, quotes: QuoteService, publicUrl: () => string, bodyLimitBytes: number): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const schema = {
    operationId: 'quoteModelRequest',
    summary: 'The price of a request to a model, without creating a job',
    description: DESCRIPTION,
    tags: ['models'],
    params: Type.Object({
      id: Type.String({ description: 'The model id, percent-encoded as one path segment', examples: ['image/vendor-a/model-a-2/medium'] }),
    }),
    querystring: NoQuery,
    body: QuoteRequest,
    response: { 200: PriceQuote, ...errorResponses(400, 404, 413, 415), 410: SunsetBody },
  };
  // Stores nothing: goes on while the data dir cannot take writes.
  const config = { storesInside: true };
  app.post(
    '/models/:id/quote',
    {
      bodyLimit: bodyLimitBytes,
      config,
      schema,
      // A retired model answers 410 before its body is read, as its generation endpoint does.
      onRequest: async (request) => quotes.available((request.params as { id: string }).id, publicUrl()),
    },
    async (request) => quotes.quote(request.params.id, request.body, publicUrl()),
  );
  const modelOf = (path: string): string => {
    if (!path.endsWith(QUOTE)) throw new DomainError('route_not_found', `no route POST /models/${path.slice(0, 200)}`);
    return path.slice(0, -QUOTE.length);
  };
  app.post(
    '/models/*',
    {
      bodyLimit: bodyLimitBytes,
      config,
      schema: { ...schema, params: Type.Object({ '*': Type.String() }), hide: true },
      onRequest: async (request) => quotes.available(modelOf((request.params as { '*': string })['*']), publicUrl()),
    },
    async (request) => quotes.quote(modelOf(request.params['*']), request.body, publicUrl()),
  );
}
