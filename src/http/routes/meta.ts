import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { resolveUrl } from '../../lib/urls.js';
import type { Catalog } from '../../models/catalog.js';

const DeprecationList = Type.Object({
  items: Type.Array(
    Type.Object({
      model: Type.String(),
      sunset_date: Type.String({ format: 'date' }),
      replacement: Type.Optional(Type.String()),
      migration_url: Type.String({ format: 'uri' }),
    }),
  ),
});

/** Unauthenticated documents about the API itself. */
export function registerMetaRoutes(app: FastifyInstance, catalog: Catalog, publicUrl: () => string): void {
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
