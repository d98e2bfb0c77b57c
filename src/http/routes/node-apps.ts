import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { NodeAppService, NodeAppVersionListQuery } from '../../services/node-apps.js';
import { requireAuth } from '../plugins/auth.js';
import { PAGE_LIMIT, parseDateTime, parseLimit, rejectUnknown } from '../query.js';
import type { RawQuery } from '../query.js';
import { errorResponses } from '../schemas.js';

/** `input_openapi_schema` and `output_openapi_schema`; other keys are the author's, kept as given. */
const OpenApiSchema = Type.Object({
  type: Type.String(),
  properties: Type.Record(Type.String(), Type.Unknown()),
  required: Type.Array(Type.String()),
});

/** Spec 2.5: the app's fields and the version's, in one item. */
const NodeAppVersion = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The node app id' }),
  author_id: Type.String({ description: "The author's email (members have no other id)" }),
  workspace_id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  slug: Type.String(),
  description: Type.String(),
  scope: Type.String({ description: 'Always `workspace`: every app of the workspace is listed' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time', description: 'The last publish time' }),
  version: Type.Integer({ minimum: 1 }),
  version_created_at: Type.String({ format: 'date-time' }),
  username: Type.String({ description: "The local part of the author's email" }),
  example_outputs: Type.Array(Type.String({ format: 'uri' })),
  input_openapi_schema: OpenApiSchema,
  output_openapi_schema: OpenApiSchema,
  node_app_version_id: Type.String({ format: 'uuid' }),
});

const NodeAppVersionPage = Type.Object({
  items: Type.Array(NodeAppVersion),
  next_cursor: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Pass as `cursor` for the next page; null on the last page.',
  }),
});

/** Query parameters of spec 4.3, with GET /jobs's rules and messages. */
function parseVersionQuery(query: RawQuery): NodeAppVersionListQuery {
  rejectUnknown(query, ['cursor', 'limit']);
  return { limit: parseLimit(query), before: parseDateTime(query, 'cursor') };
}

export function registerNodeAppRoutes(app: FastifyInstance, nodeApps: NodeAppService): void {
  app.get(
    '/node-apps/:node_app_id/versions',
    {
      schema: {
        operationId: 'listNodeAppVersions',
        summary: "List a node app's runnable versions, newest first",
        tags: ['node-apps'],
        params: Type.Object({ node_app_id: Type.String({ description: 'Node app identifier (UUID)' }) }),
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ format: 'date-time', description: 'Only versions created before this time' })),
          limit: Type.Optional(Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default })),
        }),
        response: { 200: NodeAppVersionPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { node_app_id } = request.params as { node_app_id: string };
      return nodeApps.listVersions(requireAuth(request.auth), node_app_id, parseVersionQuery(request.query as RawQuery));
    },
  );
}
