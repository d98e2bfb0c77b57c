import type { FastifyInstance } from 'fastify';
import type { AuthContext, IdentityService } from '../../services/identity.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** Routes that answer without a bearer token (the OpenAPI document, the deprecation list). */
    public?: boolean;
  }
}

/** Every Authorization header as sent: Node keeps only the first in `headers`. */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]!);
  }
  return values;
}

/** Resolves the bearer token before the body is read, so an unauthenticated request costs little. */
export function registerAuth(app: FastifyInstance, identity: IdentityService): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return;
    request.auth = await identity.authenticate(authorizationHeaders(request.raw.rawHeaders));
  });
}

export function requireAuth(auth: AuthContext | null): AuthContext {
  if (!auth) throw new Error('route registered without authentication');
  return auth;
}
