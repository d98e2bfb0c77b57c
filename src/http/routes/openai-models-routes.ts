import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { OpenAiModels } from '../../services/openai/openai-models.js';
import { NoQuery } from '../openapi/common-schemas.js';
import { OPENAI_TAG, openAiErrorResponses } from '../plugins/openai-errors.js';

const EXAMPLE = { id: 'image/vendor-a/model-a-2/medium', object: 'model', created: 1796169600, owned_by: 'vendor-a' };

export const OpenAiModelView = Type.Object(
  {
    id: Type.String({ description: 'A catalog model id (its path) or an alias of the config\'s `openai.models`', examples: [EXAMPLE.id] }),
    object: Type.Literal('model', { description: 'Always model', examples: ['model'] }),
    created: Type.Integer({ description: 'Unix seconds: when this server started (the catalog is fixed while it runs)', examples: [EXAMPLE.created] }),
    owned_by: Type.String({ description: 'The vendor segment of the model id; `mediagen` for a model without one', examples: [EXAMPLE.owned_by] }),
  },
  { $id: 'OpenAiModel', description: "A model in OpenAI's shape", examples: [EXAMPLE] },
);

export const OpenAiModelList = Type.Object(
  {
    object: Type.Literal('list', { description: 'Always list', examples: ['list'] }),
    data: Type.Array(OpenAiModelView, { description: 'The models, then the aliases', examples: [[EXAMPLE]] }),
  },
  { $id: 'OpenAiModelList', description: "The models taking requests now, then the configured aliases, in OpenAI's shape", examples: [{ object: 'list', data: [EXAMPLE] }] },
);

/**
 * GET /v1/models and GET /v1/models/{id} (OpenAI's Models API): unlike GET /models they need the
 * token, as OpenAI's do. Retired and sunset models are absent, and their ids answer 404
 * model_not_found. An id has slashes: percent-encoded in one segment (what OpenAI's SDKs send) or as they are.
 */
export function registerOpenAiModelRoutes(fastify: FastifyInstance, models: OpenAiModels): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/models',
    {
      schema: {
        operationId: 'openaiListModels',
        summary: "List the models (OpenAI's GET /v1/models)",
        description: 'Every model taking requests now, by its catalog id, and each alias of the config\'s `openai.models` whose model does.',
        tags: [OPENAI_TAG],
        querystring: NoQuery,
        response: { 200: OpenAiModelList, ...openAiErrorResponses(400, 401, 403, 503) },
      },
    },
    async () => models.list(),
  );
  const one = {
    schema: {
      operationId: 'openaiRetrieveModel',
      summary: "One model (OpenAI's GET /v1/models/{model})",
      description: 'A catalog id or an alias; an unknown, retired or sunset one is 404 with code model_not_found.',
      tags: [OPENAI_TAG],
      params: Type.Object({ id: Type.String({ description: 'The model id or alias (percent-encoded, or with its slashes as they are)', examples: [EXAMPLE.id] }) }),
      querystring: NoQuery,
      response: { 200: OpenAiModelView, ...openAiErrorResponses(400, 401, 403, 404, 503) },
    },
  };
  app.get('/models/:id', one, async (request) => models.get(request.params.id));
  app.get(
    '/models/*',
    { ...one, schema: { ...one.schema, params: Type.Object({ '*': Type.String() }), hide: true } },
    async (request) => models.get(request.params['*']),
  );
}
