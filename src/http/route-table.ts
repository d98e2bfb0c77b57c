import type { FastifyInstance, FastifySchema } from 'fastify';

/** A route as registered: what the tests need to check a response against its declared schema. */
export interface RouteEntry {
  readonly methods: readonly string[];
  readonly url: string;
  readonly schema: FastifySchema | undefined;
}

const tables = new WeakMap<FastifyInstance, RouteEntry[]>();

/**
 * Records every route registered on `app` from now on. Fastify exposes a route's handler
 * (`findRoute`) but not its schema; the response checks of the tests (checked-inject.ts) read
 * it here.
 */
export function recordRoutes(app: FastifyInstance): void {
  const table: RouteEntry[] = [];
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    table.push({ methods: ([] as string[]).concat(route.method), url: route.url, schema: route.schema });
  });
}

export function routesOf(app: FastifyInstance): readonly RouteEntry[] {
  return tables.get(app) ?? [];
}
