import type { FastifyInstance } from 'fastify';
import type { WorkerPrincipal, WorkerTokenService } from '../../services/remote/remote-tokens.js';
import { headerValues } from '../request/request-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    worker: WorkerPrincipal | null;
  }
  interface FastifyContextConfig {
    /**
     * Routes of the worker protocol (/worker/v1): authenticated with a worker token instead of an
     * API token, which is unknown to them (401), as a worker token is unknown to the API.
     */
    worker?: boolean;
  }
}

/**
 * Resolves the worker token of worker routes in `onRequest`, before the body is read, like the
 * API's auth plugin (which leaves these routes alone). Registered before the storage guard, so an
 * unauthenticated request gets its 401 first.
 */
export function registerWorkerAuth(app: FastifyInstance, workerTokens: Pick<WorkerTokenService, 'authenticate'>): void {
  app.decorateRequest('worker', null);
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config.worker || !request.routeOptions.url) return;
    request.worker = await workerTokens.authenticate(headerValues(request.raw.rawHeaders, 'authorization'));
  });
}

export function requireWorker(worker: WorkerPrincipal | null): WorkerPrincipal {
  if (!worker) throw new Error('route registered without worker authentication');
  return worker;
}
