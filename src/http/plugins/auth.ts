import type { FastifyInstance } from 'fastify';
import type { AuthContext, IdentityService } from '../../services/identity/identity.js';
import { headerValues } from '../request/request-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** Routes that answer without a bearer token (the OpenAPI document, the deprecation list). */
    public?: boolean;
  }
}

/** Resolves the bearer token before the body is read, so an unauthenticated request costs little. */
export function registerAuth(app: FastifyInstance, identity: IdentityService): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    // Worker routes take worker tokens instead (remote-auth.ts): an API token is refused there.
    if (config.public || config.worker || !request.routeOptions.url) return;
    request.auth = await identity.authenticate(headerValues(request.raw.rawHeaders, 'authorization'));
  });
}

export function requireAuth(auth: AuthContext | null): AuthContext {
  if (!auth) throw new Error('route registered without authentication');
  return auth;
}
