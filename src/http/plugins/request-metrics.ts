import type { FastifyInstance } from 'fastify';

/** The route label of a request no route matched (404s, refusals before routing): one label for all. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Where the HTTP app reports each answered request (the metrics adapter, src/metrics/). */
export interface RequestMeter {
  /** `route` is the matched route's template (`/jobs/:id`), never the URL a client sent. */
  requestServed(route: string, method: string, status: number, seconds: number): void;
}

/**
 * Counts every request once its answer has gone, by route template, method and status. The
 * template keeps the label set as small as the route table: ids, keys and query strings never
 * become labels, and whatever matched no route shares UNMATCHED_ROUTE.
 */
export function registerRequestMetrics(app: FastifyInstance, meter: RequestMeter): void {
  app.addHook('onResponse', async (request, reply) => {
    meter.requestServed(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
}
