import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { resolveUrl } from '../../lib/urls.js';
import type { Catalog } from '../../models/catalog.js';

const DeprecationList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        model: Type.String({ description: 'The model path', examples: ['image/vendor-g/model-g-3'] }),
        sunset_date: Type.String({ format: 'date', description: 'From this day the model answers 410', examples: ['2026-05-13'] }),
        replacement: Type.Optional(Type.String({ description: 'The model path to use instead', examples: ['image/vendor-g/model-g-5-lite'] })),
        migration_url: Type.String({ format: 'uri', description: 'Where the migration is described', examples: ['https://mediagen.example/deprecations'] }),
      }),
      { description: 'Deprecated and retired models' },
    ),
  },
  { $id: 'DeprecationList', description: 'Deprecated and retired models' },
);

/** Unauthenticated documents about the API itself. */
export function registerMetaRoutes(fastify: FastifyInstance, catalog: Catalog, publicUrl: () => string): void {
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
        description: 'The default target of the `Link: rel="deprecation"` header. An extension to the spec.',
        tags: ['meta'],
        security: [],
        response: { 200: DeprecationList },
      },
    },
    async () => ({
      items: catalog.entries
        .filter((e) => e.deprecation)
        .map((e) => ({
          model: e.path,
          sunset_date: e.deprecation!.sunsetDate,
          ...(e.deprecation!.replacement ? { replacement: e.deprecation!.replacement } : {}),
          migration_url: resolveUrl(e.deprecation!.migrationUrl, publicUrl()),
        })),
    }),
  );
}
