import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { AppError, invalid } from '../services/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Catalog } from '../services/catalog/catalog.js';
import type { IdentityService } from '../services/identity.js';
import type { JobService } from '../services/jobs.js';
import { registerAuth } from './plugins/auth.js';
import { registerErrorHandling, sendError } from './plugins/errors.js';
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
    // A malformed URL (bad percent-encoding) is a client error with the usual JSON body.
    frameworkErrors: (err, _request, reply) => {
      void sendError(reply as unknown as FastifyReply, invalid(`malformed request: ${err.message}`));
    },
    routerOptions: { ignoreTrailingSlash: false },
    // Every response names its request, so a user's report can be found in the log.
    genReqId: () => randomUUID(),
    // Fastify's own 503 while closing has its own body shape; ours below uses the catalogue.
    return503OnClosing: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
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
  registerAuth(app, deps.identity);
  registerJobRoutes(app, deps.jobs);
  registerGenerateRoutes(app, deps);
  registerMetaRoutes(app, deps.catalog, deps.publicUrl);
  await app.ready();
  return app;
}
