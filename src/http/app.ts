import swagger from '@fastify/swagger';
import Fastify from 'fastify';
import { DEFAULTS } from '../config/options.js';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Services } from '../services/services.js';
import type { RemoteProtocol } from '../services/remote/remote-protocol.js';
import { registerAuth } from './plugins/auth.js';
import { edgeOptions, registerEdgeHooks } from './plugins/edge.js';
import { registerErrorHandling } from './plugins/error-handler.js';
import { closest } from '../lib/closest.js';
import { registerJsonBody } from './plugins/json-body.js';
import { registerStorageGuard } from './plugins/storage-guard.js';
import { registerWorkerAuth } from './plugins/remote-auth.js';
import { registerAssetRoutes } from './routes/assets-routes.js';
import { registerGenerateRoutes } from './routes/generate-routes.js';
import { registerHealth } from './routes/health-routes.js';
import { registerJobRoutes } from './routes/jobs-routes.js';
import { registerJobEventsRoute } from './routes/job-events-routes.js';
import { heldRequests } from './request/held-requests.js';
import { registerMcpRoute } from './routes/mcp-routes.js';
import { registerMetaRoutes } from './routes/meta-routes.js';
import { registerModelRoutes } from './routes/models-routes.js';
import { registerNodeAppExecuteRoute, registerNodeAppRoutes } from './routes/node-apps-routes.js';
import { registerOutputRoutes } from './routes/outputs-routes.js';
import { registerStyleRoutes } from './routes/styles-routes.js';
import { registerUsageRoutes } from './routes/usage-routes.js';
import { registerWebhookDeliveryRoutes } from './routes/webhook-deliveries-routes.js';
import { registerWorkerRoutes } from './routes/remote-routes.js';
import { registerTokenRoutes } from './routes/tokens-routes.js';
import { registerJobDetailsRoute } from './routes/job-details-routes.js';
import { registerQuoteRoutes } from './routes/quotes-routes.js';
import { registerWorkspaceRoutes } from './routes/workspace-routes.js';
import { setLingerLimits } from './lingering-close.js';
import { applyConnectionCap, DEFAULT_SERVER_LIMITS, serverOptions } from './server-limits.js';
import type { ServerLimits } from './server-limits.js';
import { validatorCompiler } from './request/validator-compiler.js';
import { swaggerOptions } from './openapi/openapi.js';
import { compileQueryCheck } from './request/query.js';
import { recordRoutes } from './route-table.js';
import { declareCommonErrors } from './plugins/declared-errors.js';
import { registerRequestMetrics } from './plugins/request-metrics.js';
import type { RequestMeter } from './plugins/request-metrics.js';
import { registerMetricsRoute } from './routes/metrics-routes.js';
import type { MetricsEndpoint } from './routes/metrics-routes.js';
import { registerConsoleRoutes } from './routes/console-routes.js';
import { registerOpenAiRoutes } from './routes/openai-routes.js';
import { registerProviderWebhookRoute } from './routes/provider-webhook-routes.js';
import type { ProviderWebhookReceiver } from './routes/provider-webhook-routes.js';
import type { ConsoleOptions } from './routes/console-routes.js';

/** Something that runs as long as the app: started when it is ready, stopped when it closes. */
export interface BackgroundTask {
  start(): void;
  stop(): Promise<void>;
}

/** Routes that take no body (GET, DELETE) still get one parsed if sent; it may not be big. */
const NO_BODY_LIMIT_BYTES = 1024;

/**
 * The use cases the HTTP API calls, as the composition (services/services.ts) builds them: a
 * runtime or a test hands its `Services` over by spreading them. Those only the workers and the CLI
 * use (runs, signals, backup, idempotency, bindings) are left out; `outputs` is the app's own below.
 */
type AppServices = Pick<
  Services,
  | 'identity' | 'workspace' | 'tokens'
  | 'jobs' | 'jobDetails' | 'waits' | 'generation'
  | 'catalog' | 'models' | 'quotes' | 'billing'
  | 'nodeApps' | 'nodeAppExecution' | 'assets' | 'styles' | 'webhooks'
  | 'workerTokens' | 'readiness' | 'clock' | 'openai'
>;

/** The use cases, and what only the HTTP app is given: its URL, limits, logger and optional parts. */
export interface AppDeps extends AppServices {
  /** The base URL clients reach this server at; known only after listening when the port is 0. */
  readonly publicUrl: () => string;
  /** The largest JSON body of a generation request (`body_limit_bytes`); default 128 KiB. */
  readonly bodyLimitBytes?: number;
  /** `--allow-private-urls`; absent, literal private and loopback URLs are refused with 400. */
  readonly allowPrivateUrls?: boolean;
  /** The MCP tool upload_asset's URL fetch: its time limit (`input_timeout_ms`); default 30 s. */
  readonly inputTimeoutMs?: number;
  /** Timeouts and the connection cap for the listening server; absent, DEFAULT_SERVER_LIMITS. */
  readonly limits?: ServerLimits;
  /** The process's logger, shared with the worker; absent, nothing is logged (tests). */
  readonly logger?: FastifyBaseLogger;
  /**
   * Job output and asset files, served without auth under /outputs and /assets/files; absent (a
   * test's choice: `Services` always has them), those routes and the asset routes are not registered.
   */
  readonly outputs?: Services['outputs'];
  /** The worker protocol's use cases (/worker/v1, docs/workers.md); absent, its routes are not registered. */
  readonly remote?: RemoteProtocol;
  /** Tasks living with the app (remote-job maintenance). */
  readonly background?: readonly BackgroundTask[];
  /** Where answered requests are counted (metrics enabled); absent: nowhere. */
  readonly requestMeter?: RequestMeter;
  /** `GET /metrics` behind `metrics_token`; absent: no such route (404 like any unknown path). */
  readonly metrics?: MetricsEndpoint;
  /** The web console at /console (docs/console.md); absent: not served. */
  readonly console?: ConsoleOptions;
  /** Webhooks from hosted providers (docs/providers.md); absent (no provider takes webhooks): no such route. */
  readonly providerWebhooks?: ProviderWebhookReceiver;
}

/** The HTTP API as an un-listened Fastify instance: main.ts listens, tests use inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits = deps.limits ?? DEFAULT_SERVER_LIMITS;
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    // Per route: generation routes set their own (body_limit_bytes); every other route takes none.
    bodyLimit: NO_BODY_LIMIT_BYTES,
    ...serverOptions(limits),
    ...edgeOptions(deps.identity),
  });
  applyConnectionCap(app.server, limits, deps.logger, deps.clock);
  setLingerLimits(app.server, { ms: limits.lingerMs, bytes: limits.lingerBytes });
  if (deps.requestMeter) registerRequestMetrics(app, deps.requestMeter);
  registerEdgeHooks(app);
  // A querystring schema is checked by the query rules (request/query.ts); bodies by Ajv (models/validation.ts).
  app.setValidatorCompiler((req) => (req.httpPart === 'querystring' ? compileQueryCheck(req.schema as object) : validatorCompiler(req)));
  // Response schemas document the API; they must never silently drop fields on the way out.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  declareCommonErrors(app);
  recordRoutes(app);
  await app.register(swagger, swaggerOptions());

  // A mistyped model in a generation path is answered with the nearest model's path.
  const generatePaths = deps.catalog.entries.filter((e) => !e.route && e.request !== undefined).map((e) => `/generate/${e.path}`);
  registerErrorHandling(app, { suggest: (method, path) => (method === 'POST' && path.startsWith('/generate/') ? closest(path, generatePaths) : undefined) });
  registerJsonBody(app);
  registerAuth(app, deps.identity);
  registerWorkerAuth(app, deps.workerTokens);
  registerStorageGuard(app, deps.readiness);
  registerHealth(app, deps.readiness);
  registerJobRoutes(app, deps.jobs, deps.catalog, deps.publicUrl);
  registerJobDetailsRoute(app, deps.jobDetails, deps.publicUrl);
  const held = heldRequests(app);
  // The waiters stop hearing other processes with the app.
  app.addHook('onClose', () => deps.waits.close());
  registerJobEventsRoute(app, { waits: deps.waits, held, publicUrl: deps.publicUrl });
  const creation = {
    ...deps,
    held,
    allowPrivateUrls: deps.allowPrivateUrls ?? false,
    bodyLimitBytes: deps.bodyLimitBytes ?? DEFAULTS.body_limit_bytes,
  };
  registerGenerateRoutes(app, creation);
  registerStyleRoutes(app, creation);
  registerWebhookDeliveryRoutes(app, deps.webhooks);
  registerUsageRoutes(app, deps.billing);
  registerWorkspaceRoutes(app, deps);
  registerTokenRoutes(app, deps.tokens);
  registerNodeAppRoutes(app, deps.nodeApps);
  registerNodeAppExecuteRoute(app, creation);
  registerMetaRoutes(app, deps.models, deps.publicUrl);
  registerModelRoutes(app, deps.models, deps.publicUrl, deps.identity);
  registerQuoteRoutes(app, deps.quotes, deps.publicUrl, creation.bodyLimitBytes);
  registerMcpRoute(app, { ...creation, fetchTimeoutMs: deps.inputTimeoutMs ?? DEFAULTS.input_timeout_ms });
  // OpenAI's Images, Videos and Models APIs under /v1 (docs/openai.md).
  await registerOpenAiRoutes(app, { ...creation, door: deps.openai });
  if (deps.outputs) {
    registerOutputRoutes(app, deps.outputs, (key) => deps.jobs.outputInUse(key), (key) => deps.jobs.outputExpired(key));
    registerAssetRoutes(app, deps.assets, deps.outputs, deps.publicUrl);
  }
  if (deps.remote) registerWorkerRoutes(app, deps.remote, deps.publicUrl, held);
  if (deps.metrics) registerMetricsRoute(app, deps.metrics);
  if (deps.console) registerConsoleRoutes(app, deps.console);
  if (deps.providerWebhooks) registerProviderWebhookRoute(app, deps.providerWebhooks);
  const background = deps.background ?? [];
  app.addHook('onReady', async () => background.forEach((task) => task.start()));
  app.addHook('onClose', async () => {
    await Promise.all(background.map((task) => task.stop()));
  });
  await app.ready();
  return app;
}
