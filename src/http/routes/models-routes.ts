import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ModelList, ModelView } from '../../services/catalog/models.js';
import type { ModelService } from '../../services/catalog/models.js';
import type { IdentityService } from '../../services/identity/identity.js';
import { headerValues } from '../request/request-headers.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';

const EXAMPLE_ID = 'image/vendor-a/model-a-2/medium';

const IdParam = Type.Object({
  id: Type.String({
    description:
      'The model id, which has slashes: percent-encoded as one path segment (`image%2Fvendor-a%2Fmodel-a-2%2Fmedium`, ' +
      'what generated clients send), or with its slashes as they are (`/models/image/vendor-a/model-a-2/medium`)',
    examples: [EXAMPLE_ID],
  }),
});

const GET_DESCRIPTION =
  'One model of GET /models. A model past its sunset is still found, with `available: false`. ' +
  'The id may be sent percent-encoded or with its slashes as they are. No token is needed; with the token of a workspace ' +
  "owner or admin, the answer also names the engines that serve the model, in the order of its chain, and each one's state (`engines`).";

/**
 * GET /models and GET /models/{id}: the catalog is documentation, like /openapi.json and
 * /deprecations, so no token is needed. A model id has slashes, so one model is served twice: at
 * `/models/:id` (the OpenAPI form; a client percent-encodes the id into one segment) and at
 * `/models/*` (the id's slashes as they are, hidden from the document; the same answer).
 */
export function registerModelRoutes(fastify: FastifyInstance, models: ModelService, publicUrl: () => string, identity: Pick<IdentityService, 'authenticate'>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/models',
    {
      config: { public: true },
      schema: {
        operationId: 'listModels',
        summary: 'The model catalog: every model, its price, request schema and deprecation',
        description:
          'Every model this server knows, retired ones included (`available: false`). For each: its id (the path of its ' +
          'generation endpoint and the job `type`), kind, description, price rule with the rates in force in micro-USD, the ' +
          'JSON Schema its endpoint validates bodies with, and a `deprecation` object where one applies. An extension to the spec.',
        tags: ['models'],
        security: [],
        querystring: NoQuery,
        response: { 200: ModelList, ...errorResponses(400) },
      },
    },
    async () => models.list(publicUrl()),
  );

  const one = {
    config: { public: true },
    schema: {
      operationId: 'getModel',
      summary: 'One model of the catalog',
      description: GET_DESCRIPTION,
      tags: ['models'],
      security: [],
      params: IdParam,
      querystring: NoQuery,
      response: { 200: ModelView, ...errorResponses(400, 401, 404) },
    },
  };
  // The route is public, so the auth hook reads no token: a token sent is read here, and a bad one is a 401 as anywhere.
  const getAs = async (raw: FastifyRequest['raw'], id: string) => {
    const authorization = headerValues(raw.rawHeaders, 'authorization');
    const auth = authorization.length === 0 ? null : await identity.authenticate(authorization);
    return models.getAs(auth, id, publicUrl());
  };
  app.get('/models/:id', one, async (request) => getAs(request.raw, request.params.id));
  app.get(
    '/models/*',
    { ...one, schema: { ...one.schema, params: Type.Object({ '*': Type.String() }), hide: true } },
    async (request) => getAs(request.raw, request.params['*']),
  );
}
