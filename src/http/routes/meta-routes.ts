import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DeprecationList } from '../../services/catalog/models.js';
import type { ModelService } from '../../services/catalog/models.js';

/** Unauthenticated documents about the API itself. */
export function registerMetaRoutes(fastify: FastifyInstance, models: ModelService, publicUrl: () => string): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/openapi.json',
    { config: { public: true }, schema: { hide: true } },
    // The server entry is this server as its clients reach it, known only once listening.
    async () => ({ ...app.swagger(), servers: [{ url: publicUrl() }] }),
  );

  app.get(
    '/deprecations',
    {
      config: { public: true },
      schema: {
        operationId: 'listDeprecations',
        summary: 'Deprecated and retired models, their sunset dates and replacements',
        description:
          'The default target of the `Link: rel="deprecation"` header. An extension to the spec. Each item is the model id and ' +
          'the `deprecation` object GET /models shows for it.',
        tags: ['meta'],
        security: [],
        response: { 200: DeprecationList },
      },
    },
    async () => models.deprecations(publicUrl()),
  );
}
