import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Clock } from '../lib/clock.js';
import type { Catalog } from '../services/catalog/catalog.js';
import type { IdentityService } from '../services/identity.js';
import type { BillingService } from '../services/billing.js';
import type { JobService } from '../services/jobs.js';
import type { NodeAppService } from '../services/node-apps.js';
import type { WebhookService } from '../services/webhooks.js';
import type { OutputFiles } from '../store/files/output-files.js';
import type { Readiness } from '../services/readiness.js';
import { registerAuth } from './plugins/auth.js';
import { edgeOptions, registerEdgeHooks } from './plugins/edge.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerJsonBody } from './plugins/json-body.js';
import { registerGenerateRoutes } from './routes/generate.js';
import { registerHealth } from './routes/health.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerMetaRoutes } from './routes/meta.js';
import { registerNodeAppRoutes } from './routes/node-apps.js';
import { registerOutputRoutes } from './routes/outputs.js';
import { registerUsageRoutes } from './routes/usage.js';
import { registerWebhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { validatorCompiler } from './validation.js';

export interface AppDeps {
  readonly identity: IdentityService;
  readonly jobs: JobService;
  readonly billing: BillingService;
  readonly nodeApps: NodeAppService;
  readonly webhooks: WebhookService;
  /** /healthz, /readyz and the storage guard on job creation. */
  readonly readiness: Readiness;
  readonly catalog: Catalog;
  readonly clock: Clock;
  /** The base URL clients reach this server at; known only after listening when the port is 0. */
  readonly publicUrl: () => string;
  readonly bodyLimitBytes?: number;
  /** The process's logger, shared with the worker; absent, nothing is logged (tests). */
  readonly logger?: FastifyBaseLogger;
  /** Job output files, served without auth under /outputs; absent, the route is not registered. */
  readonly outputs?: OutputFiles;
}

/** The HTTP API as an un-listened Fastify instance: main.ts listens, tests use inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: deps.bodyLimitBytes ?? 1024 * 1024,
    ...edgeOptions(deps.identity),
  });
  registerEdgeHooks(app);
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
  registerHealth(app, deps.readiness);
  registerJobRoutes(app, deps.jobs, deps.catalog, deps.publicUrl);
  registerGenerateRoutes(app, deps);
  registerWebhookDeliveryRoutes(app, deps.webhooks);
  registerUsageRoutes(app, deps.billing);
  registerNodeAppRoutes(app, deps.nodeApps);
  registerMetaRoutes(app, deps.catalog, deps.publicUrl);
  if (deps.outputs) registerOutputRoutes(app, deps.outputs);
  await app.ready();
  return app;
}
