import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { AppError, invalid, notFound } from '../services/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Catalog } from '../services/catalog/catalog.js';
import type { IdentityService } from '../services/identity.js';
import type { JobService } from '../services/jobs.js';
import { authorizationHeaders, registerAuth } from './plugins/auth.js';
import { registerErrorHandling, sendError, toAppError } from './plugins/errors.js';
import { registerJsonBody } from './plugins/json-body.js';
import { registerGenerateRoutes } from './routes/generate.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerMetaRoutes } from './routes/meta.js';
import { validatorCompiler } from './validation.js';

export interface AppDeps {
  readonly identity: IdentityService;
  readonly jobs: JobService;
  readonly catalog: Catalog;
  readonly clock: Clock;
  /** The base URL clients reach this server at; known only after listening when the port is 0. */
  readonly publicUrl: () => string;
  readonly bodyLimitBytes?: number;
  readonly logger?: FastifyServerOptions['logger'];
}

/** The HTTP API as an un-listened Fastify instance: main.ts listens, tests use inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes ?? 1024 * 1024,
    // A path that is not valid percent-encoding matches no route: after the usual authentication
    // it is "not found", like a malformed job id, and its text is not echoed back.
    frameworkErrors: (_err, request, reply) => {
      void deps.identity.authenticate(authorizationHeaders(request.raw.rawHeaders)).then(
        () => sendError(reply as unknown as FastifyReply, notFound('not found: the URL path is not valid percent-encoding')),
        (err: Error) => sendError(reply as unknown as FastifyReply, toAppError(err)),
      );
    },
    // Requests Node's HTTP parser refuses never reach Fastify; they still get a JSON error.
    clientErrorHandler: (err, socket) => {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || !socket.writable) return socket.destroy();
      const tooLarge = (err as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW';
      const error = tooLarge
        ? new AppError('headers_too_large', 'the request headers are too large')
        : invalid('malformed HTTP request');
      const body = JSON.stringify(error.body());
      socket.end(
        `HTTP/1.1 ${error.status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    },
    // Long ids reach the route (and authentication) and are then simply not found.
    routerOptions: { maxParamLength: 1000 },
    // Every response names its request, so a user's report can be found in the log.
    genReqId: () => randomUUID(),
    // Fastify's own 503 while closing has its own body shape; ours below uses the catalogue.
    return503OnClosing: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Job states change under the same URL; no cache between client and server may keep one.
    reply.header('cache-control', 'no-store');
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing) {
      throw new AppError('unavailable', 'the server is shutting down; retry shortly', {
        headers: { 'retry-after': '1', connection: 'close' },
      });
    }
  });
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API; they must never silently drop fields on the way out.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mediagen',
        version: 'v1',
        description: 'Asynchronous media generation jobs. Paths carry no version prefix.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
    },
  });

  registerErrorHandling(app);
  registerJsonBody(app);
  registerAuth(app, deps.identity);
  registerJobRoutes(app, deps.jobs);
  registerGenerateRoutes(app, deps);
  registerMetaRoutes(app, deps.catalog, deps.publicUrl);
  await app.ready();
  return app;
}
