import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../openapi/common-schemas.js';

/**
 * Declares on every route with response schemas the errors the plugins answer on any route, so
 * each is declared where it is made rather than repeated per route: 503 with Retry-After (edge:
 * shutting down; errors: storage failing) and, unless the route is public, 401 and 403 (auth).
 * A route's own declaration of a status wins (e.g. /readyz's 503 body). Registered before the
 * routes: onRoute sees only routes added after it.
 */
export function declareCommonErrors(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!route.schema || !response) return;
    const common = errorResponses(503, ...(route.config?.public ? [] : [401, 403]));
    route.schema = { ...route.schema, response: { ...common, ...response } };
  });
}
