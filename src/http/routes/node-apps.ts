import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { NodeApp, NodeAppVersionPage } from '../../services/list-views.js';
import type { NodeAppService } from '../../services/node-apps.js';
import { requireAuth } from '../plugins/auth.js';
import { PAGE_LIMIT, toMicros } from '../query.js';
import { NoQuery, errorResponses } from '../schemas.js';

export function registerNodeAppRoutes(app: FastifyInstance, nodeApps: NodeAppService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/node-apps/:node_app_id/versions',
    {
      schema: {
        operationId: 'listNodeAppVersions',
        summary: "List a node app's runnable versions, newest first",
        description: "The app's published versions with their input and output schemas (spec 2.5); query parameters as GET /jobs's.",
        tags: ['node-apps'],
        params: Type.Object({
          node_app_id: Type.String({ description: 'Node app identifier (UUID)', examples: ['5d0c2b6e-8a8f-4f3e-9b1a-6c2d7e8f9a01'] }),
        }),
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ format: 'date-time', description: 'Only versions created before this time', examples: ['2026-11-22T12:00:00.000000Z'] })),
          limit: Type.Optional(Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default, description: 'Page size', examples: [100] })),
        }),
        response: { 200: NodeAppVersionPage, ...errorResponses(400, 404) },
      },
    },
    (request) =>
      nodeApps.listVersions(requireAuth(request.auth), request.params.node_app_id, {
        limit: request.query.limit ?? PAGE_LIMIT.default,
        before: toMicros(request.query.cursor),
      }),
  );

  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/node-apps/:id',
    {
      schema: {
        operationId: 'getNodeApp',
        summary: 'Get a node app by version id',
        description: "The app as of one of its versions: its schemas, example outputs and how its graph maps inputs and outputs (docs/node-apps.md).",
        tags: ['node-apps'],
        params: Type.Object({ id: Type.String({ description: 'Node app version identifier (UUID)', examples: ['9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d'] }) }),
        querystring: NoQuery,
        response: { 200: NodeApp, ...errorResponses(400, 404) },
      },
    },
    (request) => nodeApps.get(requireAuth(request.auth), request.params.id),
  );
}
