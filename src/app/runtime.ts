import { join } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { Engine } from '../engines/engine.js';
import { UpstreamNudges } from '../engines/providers/upstream-nudges.js';
import type { MediaTools } from '../engines/media/media-tools.js';
import type { AppDeps } from '../http/app.js';
import { systemClock } from '../lib/clock.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { DiskCheck } from '../outputs/disk/disk-check.js';
import { DiskOutputStore } from '../outputs/disk/disk-output-store.js';
import type { OutputStore } from '../outputs/output-store.js';
import type { S3Parts } from '../outputs/s3/open-s3.js';
import type { S3StoreConfig } from '../outputs/s3/s3-client.js';
import type { Catalog } from '../models/catalog.js';
import type { PriceTable } from '../models/prices.js';
import type { RunPolicy } from '../services/jobs/job-runs.js';
import type { JobWaitOptions } from '../services/jobs/job-waits.js';
import { createServices } from '../services/services.js';
import { buildEngineSet, kindWiring, wireModels } from './engine-set.js';
import { PROVIDER_PREFIX } from '../engines/providers/provider-bindings.js';
import type { EngineSet } from './engine-set.js';
import { assetInspector } from './asset-inspector.js';
import { checkSandboxBindings, sandboxRunPolicy } from './sandbox-wiring.js';
import type { Services } from '../services/services.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { OUTPUTS_DIR, httpOptionsFor, mediaLimits, priceTableFor, runPolicyFor } from './settings.js';
import type { JobWorker, JobWorkerOptions, RunningWorker, WorkerParts } from './workers.js';
import type { MetricsServer } from '../metrics/metrics-server.js';
import type { ClusterReadings, PromMetrics } from '../metrics/prom-metrics.js';
import { modelQueues } from '../metrics/queue-figures.js';
import { msToMicros } from '../lib/time.js';

/** Parts a test or a bench supplies instead of building them from the config. */
export interface RuntimeOverrides {
  readonly clock?: Clock;
  /** An open store (a test's backend); the runtime then leaves closing it to the caller's `close`. */
  readonly store?: Store;
  readonly outputs?: OutputStore;
  /** The engine every worker of this runtime runs jobs on. */
  readonly engine?: Engine;
  readonly runPolicy?: Partial<RunPolicy>;
  /** The job waiters' settings (tests: a small stream cap, another heartbeat). */
  readonly waits?: Partial<JobWaitOptions>;
  /** Where a request without a seed gets one (default Math.random). */
  readonly random?: () => number;
}

export interface HttpOptions {
  /** The base URL clients reach this server at; known only after listening when the port is 0. */
  readonly publicUrl: () => string;
  readonly logger?: FastifyBaseLogger;
  /** Replaces what the config says (tests): body limit, private URLs, timeouts and connection cap. */
  readonly http?: Partial<Pick<AppDeps, 'bodyLimitBytes' | 'allowPrivateUrls' | 'limits'>>;
}

/** Everything one process runs, built once from its config. */
export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly store: Store;
  readonly outputs: OutputStore;
  readonly catalog: Catalog;
  readonly prices: PriceTable;
  readonly services: Services;
  /**
   * The engine this process runs jobs on, built on first use: the router over this process's
   * engines. Throws a ConfigError naming a model no engine here can run, so `serve` asks for it
   * before listening and such a server never starts; `admin` and API-only processes never ask.
   */
  engine(log?: Log): Promise<Engine>;
  /** The HTTP API, un-listened. */
  buildHttp(opts: HttpOptions): Promise<FastifyInstance>;
  /** One job worker, not started (tests run one without the webhook sender and janitor). */
  createJobWorker(log: Log, opts?: JobWorkerOptions): Promise<JobWorker>;
  /** The job worker, webhook sender and output janitor of a `serve` process, started. */
  startWorkers(log: Log, publicUrl: () => string): Promise<RunningWorker>;
  /** `/metrics` listening on `metrics_host:metrics_port`; undefined when `metrics_port` is not set. */
  serveMetrics(log?: Log): Promise<MetricsServer | undefined>;
  /** The ffmpeg and ffprobe this process runs (the config's, PATH's or the bundled ones), each with its version. */
  mediaTools(): Promise<MediaTools>;
  /** Stops what the engines keep running (command engines' model processes); `close` does it too. */
  closeEngines(): Promise<void>;
  /** Closes the engines and the store. */
  close(): Promise<void>;
}

/**
 * The one composition root: config -> store, output store, catalog, prices, services, engine,
 * workers and the HTTP app. `serve`, `admin`, the test helper and the bench all build through it,
 * so the wiring is written once.
 */
export async function createRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const clock = overrides.clock ?? systemClock;
  // Config mistakes first (unknown models, rates), before anything is opened.
  // The one list of models: the registry's and the config file's `models`; everything else reads the catalog.
  const wiring = wireModels(config);
  const { catalog, bindings } = wiring;
  checkSandboxBindings(config, bindings);
  const runPolicy = sandboxRunPolicy(config, { ...runPolicyFor(config, catalog), ...overrides.runPolicy });
  const prices = priceTableFor(config, catalog);
  const disk = new DiskCheck(config.dataDir, config.minFreeDiskBytes, clock);
  // The S3 SDK is loaded only for an s3:// store: `admin` on a disk store starts without it.
  const s3 = overrides.outputs || config.outputStore.kind !== 's3' ? undefined : await openS3Outputs(config, config.outputStore, clock, disk);
  const outputs = overrides.outputs ?? s3?.outputs ?? new DiskOutputStore(join(config.dataDir, OUTPUTS_DIR));
  const store = overrides.store ?? (await openConfiguredStore(config));
  // Before anything locates ffmpeg: the config's paths, else PATH, else the bundled binaries.
  const media = await import('../engines/media/media-tools.js');
  media.configureMediaTools(config);
  const mediaTools = () => media.describeMediaTools();
  // Read at scrape time, once `services` exists.
  const metrics = await metricsFor(config, clock, {
    queueDepth: () => store.stats.depthByStatus(),
    remoteWorkers: async () => (await services.workerTokens.liveWorkers()).length,
    queueByModel: async () => modelQueues(await store.stats.queueByType(), (type) => bindings.of(type), msToMicros(clock.nowMs())),
  });
  const services = createServices(store, catalog, clock, {
    ...(metrics ? { meter: metrics } : {}),
    limits: { maxConcurrentJobs: config.maxConcurrentJobs, maxBackloggedJobs: config.maxBackloggedJobs },
    outputs,
    runPolicy,
    prices,
    // With S3, the bucket is checked along with the data dir (runs' scratch stays local).
    disk: s3?.check ?? disk,
    inspect: assetInspector(mediaLimits(config)),
    assets: { maxBytes: config.assetMaxBytes, quotaBytes: config.assetQuotaBytes },
    bindings,
    sandbox: config.sandbox,
    waits: { pollMs: config.pollIntervalMs, ...overrides.waits },
    idempotencyKeyHours: config.idempotencyKeyHours,
    createBatching: config.createBatching,
    ...(overrides.random ? { random: overrides.random } : {}),
    openai: config.openai,
    retention: config.retention,
    mediaTools: async () => {
      const t = await mediaTools();
      return { ffmpeg: media.toolDetail(t.ffmpeg), ffprobe: media.toolDetail(t.ffprobe) };
    },
  });
  // The HTTP app, the workers and the engines are loaded on first use: `mediagen admin` starts in
  // a fraction of the time without Fastify, undici, sharp and ffmpeg's wrappers.
  let engine: Promise<Engine> | undefined;
  // Verified provider webhooks wake the runs of this process that poll those jobs.
  const nudges = new UpstreamNudges();
  // Built for the worker's engine and again for the API's webhook receiver, each with its log; they share `nudges`.
  const providersOf = (log?: Log) =>
    import('../engines/providers/provider-kind.js').then((m) =>
      m.providerEngines(kindWiring(config, wiring, m.PROVIDER_KIND), { clock, limits: mediaLimits(config), nudges, ...(metrics ? { meter: metrics } : {}), ...(log ? { log } : {}) }),
    );
  const providerWebhooksOf = async (log?: Log) => new (await import('../engines/providers/provider-webhooks.js')).ProviderWebhooks(await providersOf(log), nudges, clock);
  let engineSet: Promise<EngineSet> | undefined;
  const closeEngines = async () => {
    await engineSet?.then((set) => set.close()).catch(() => undefined);
  };
  const engineOf = (log?: Log) =>
    (engine ??= overrides.engine
      ? Promise.resolve(overrides.engine)
      : (engineSet = buildEngineSet(config, wiring, { clock, nudges, ...(metrics ? { meter: metrics } : {}), ...(log ? { log } : {}) })).then((set) => {
          metrics?.watchEngines(() => set.router.states());
          services.engineHealth.watch(() => set.router.states());
          return set.router;
        }));
  const parts = async (given?: Engine, log?: Log): Promise<WorkerParts> => ({ config, store, services, outputs, engine: given ?? (await engineOf(log)) });
  return {
    config,
    clock,
    store,
    outputs,
    catalog,
    prices,
    services,
    engine: engineOf,
    buildHttp: async (opts) => {
      const [{ buildApp }, { remoteDuties }] = await Promise.all([import('../http/app.js'), import('./remote-duties.js')]);
      const remote = remoteDuties(config, store, services, opts.logger);
      return buildApp({
        ...services,
        ...httpOptionsFor(config),
        ...opts.http,
        publicUrl: opts.publicUrl,
        ...(opts.logger ? { logger: opts.logger } : {}),
        remote: remote.protocol,
        background: remote.background,
        ...(metrics ? { requestMeter: metrics } : {}),
        ...(metrics && config.metricsToken !== undefined ? { metrics: { token: config.metricsToken, scrape: () => metrics.scrape() } } : {}),
        console: { mediaOrigins: () => mediaOrigins(opts.publicUrl(), outputs) },
        ...([...wiring.named.values()].some((b) => b.engine.startsWith(PROVIDER_PREFIX)) ? { providerWebhooks: await providerWebhooksOf(opts.logger) } : {}),
      });
    },
    createJobWorker: async (log, opts) => (await import('./workers.js')).createJobWorker(await parts(opts?.engine, log), log, opts),
    startWorkers: async (log, publicUrl) => (await import('./workers.js')).startWorkers(await parts(undefined, log), log, publicUrl),
    serveMetrics: async (log) => {
      if (!metrics || config.metricsPort === undefined) return undefined;
      return (await import('../metrics/metrics-server.js')).listenMetrics(() => metrics.scrape(), config.metricsHost, config.metricsPort, log);
    },
    mediaTools,
    closeEngines,
    // The engines first: a command engine's model processes end with the process that started them.
    close: () =>
      closeEngines()
        .then(() => store.close())
        .finally(() => s3?.close()),
  };
}

async function openS3Outputs(config: Config, s3: S3StoreConfig, clock: Clock, disk: DiskCheck): Promise<S3Parts> {
  const { openS3OutputStore } = await import('../outputs/s3/open-s3.js');
  const presignTtlSeconds = config.outputUrls === 'presign' ? config.presignTtlSeconds : undefined;
  return openS3OutputStore(s3, { dataDir: config.dataDir, presignTtlSeconds, clock, disk });
}

/**
 * The Prometheus metrics, when `metrics_port` or `metrics_token` asks for them; otherwise none,
 * and the services count into the no-op meter (prom-client is not even loaded).
 */
async function metricsFor(config: Config, clock: Clock, readings: ClusterReadings): Promise<PromMetrics | undefined> {
  if (config.metricsPort === undefined && config.metricsToken === undefined) return undefined;
  const { PromMetrics } = await import('../metrics/prom-metrics.js');
  return new PromMetrics(readings, clock);
}

async function openConfiguredStore(config: Config): Promise<Store> {
  try {
    return await openStore(config);
  } catch (err) {
    const where = config.databaseUrl ? 'the PostgreSQL database' : `the store in ${config.dataDir}`;
    throw new ConfigError(`cannot open ${where}: ${(err as Error).message}`);
  }
}

/**
 * Where a console page may load outputs from besides its own origin: the public URL's origin (the
 * URLs in results), and the bucket's when output URLs redirect to presigned ones.
 */
async function mediaOrigins(publicUrl: string, outputs: OutputStore): Promise<string[]> {
  const origins = new Set([new URL(publicUrl).origin]);
  if (outputs.presignOrigin) origins.add(await outputs.presignOrigin());
  return [...origins];
}
