import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../../services/upkeep/readiness.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a POST or PUT to the route stores, as its 503 says it (`store new uploads`); default jobs. */
    stores?: string;
    /**
     * The route asks for storage only in the operations that store (POST /mcp: generate and
     * upload_asset), so its reads go on while the disk cannot take writes.
     */
    storesInside?: boolean;
  }
}

/** The 503 wording of a POST that cannot store what it would: the route's `stores`, else jobs. */
export const whatPostStores = (stores: string | undefined): string => stores ?? 'store new jobs';

/**
 * An authenticated POST (it would store a job) or PUT (a remote worker's output upload) is refused
 * with 503 and Retry-After while the data dir cannot take writes, before its body is read; reads
 * and deletes go on. The disk check behind
 * it is cached for a second, so this costs nothing per request.
 */
export function registerStorageGuard(app: FastifyInstance, readiness: Readiness): void {
  // Registered after the auth plugin's hook, so an unauthenticated POST still gets its 401.
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if ((request.method !== 'POST' && request.method !== 'PUT') || config.public || config.storesInside || !request.routeOptions.url) return;
    await readiness.assertCanStore(whatPostStores(request.routeOptions.config.stores));
  });
}
