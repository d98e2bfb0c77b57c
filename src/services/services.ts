import type { Clock } from '../lib/clock.js';
import type { DiskCheck } from '../outputs/disk/disk-check.js';
import type { OutputStore } from '../outputs/output-store.js';
import type { Store } from '../store/store.js';
import type { Catalog } from '../models/catalog.js';
import type { EngineBindings } from '../engines/bindings.js';
import { AssetService } from './assets/assets.js';
import type { AssetPolicy, Inspector } from './assets/assets.js';
import { BillingService } from './billing/billing.js';
import type { PriceTable } from '../models/prices.js';
import { GenerationService } from './jobs/generation.js';
import { IdentityService } from './identity/identity.js';
import type { IdentityLimits } from './identity/identity.js';
import { JobRuns } from './jobs/job-runs.js';
import { JobRoutes } from './jobs/job-routes.js';
import type { RunPolicy } from './jobs/job-runs.js';
import { JobSignals } from './jobs/job-signals.js';
import { JobWaits } from './jobs/job-waits.js';
import type { JobWaitOptions } from './jobs/job-waits.js';
import { JobService } from './jobs/jobs.js';
import { ModelService } from './catalog/models.js';
import { NodeAppExecution } from './node-apps/node-app-execution.js';
import { NodeAppService } from './node-apps/node-apps.js';
import { Readiness } from './upkeep/readiness.js';
import { EngineHealth } from './common/engine-health.js';
import type { MediaToolsDetail } from './upkeep/readiness.js';
import { StoreBackup } from './upkeep/store-backup.js';
import { Idempotency } from './common/idempotency.js';
import { JobAdmission } from './jobs/job-admission.js';
import type { CreateBatching } from './jobs/job-admission.js';
import { StyleService } from './styles/styles.js';
import { WebhookService } from './webhooks/webhooks.js';
import { WorkerTokenService } from './remote/remote-tokens.js';
import { TokenService } from './identity/tokens.js';
import { JobDetailsService } from './jobs/job-details.js';
import { ModelRequests } from './catalog/model-requests.js';
import { QuoteService } from './catalog/quotes.js';
import { WorkspaceService } from './identity/workspace.js';
import { noMeter } from './common/meter.js';
import type { Meter } from './common/meter.js';
import type { RandomSource } from '../models/random-seed.js';
import { createOpenAiDoor } from './openai/openai-door.js';
import type { OpenAiDoor } from './openai/openai-door.js';
import { DEFAULT_OPENAI_SETTINGS } from '../config/openai-settings.js';
import type { OpenAiSettings } from '../config/openai-settings.js';
import type { RetentionConfig } from '../config/storage.js';

export interface Services {
  readonly identity: IdentityService;
  /** GET /workspace: the caller's workspace, role and balance. */
  readonly workspace: WorkspaceService;
  /** The API's token operations (GET/POST /tokens, revoke) over IdentityService's. */
  readonly tokens: TokenService;
  readonly jobs: JobService;
  /** GET /jobs/{id}/details: a job's request, status history and billing. */
  readonly jobDetails: JobDetailsService;
  readonly generation: GenerationService;
  /** The catalog as data: GET /models, GET /deprecations. */
  readonly models: ModelService;
  /** POST /models/{id}/quote: a request's price before it is sent. */
  readonly quotes: QuoteService;
  readonly runs: JobRuns;
  /** Routing's records of in-process runs: engine places, routes (docs/routing.md). */
  readonly routes: JobRoutes;
  readonly billing: BillingService;
  readonly nodeApps: NodeAppService;
  /** POST /node-apps/{id}/execute: a version's graph as one job. */
  readonly nodeAppExecution: NodeAppExecution;
  readonly assets: AssetService;
  /** Styles: list, read, change, share; a running job's style artifacts. */
  readonly styles: StyleService;
  readonly webhooks: WebhookService;
  /** Worker tokens, their authentication, and the presence of remote workers. */
  readonly workerTokens: WorkerTokenService;
  readonly signals: JobSignals;
  /** Waiting for a job's changes: Prefer: wait, its event stream, the MCP tools' wait. */
  readonly waits: JobWaits;
  readonly readiness: Readiness;
  /** This process's engines' circuits, once its engines are built (/readyz, GET /models/{id}). */
  readonly engineHealth: EngineHealth;
  /** `mediagen admin store backup`: a copy of the embedded store. */
  readonly backup: StoreBackup;
  /** Idempotency-Keys, with the configured window (the retention janitor prunes past it). */
  readonly idempotency: Idempotency;
  readonly outputs: OutputStore;
  readonly catalog: Catalog;
  /** What runs each model's jobs: in-process engines or a remote pool. */
  readonly bindings: EngineBindings;
  readonly clock: Clock;
  /** OpenAI's Images, Videos and Models APIs over the native jobs (/v1, docs/openai.md). */
  readonly openai: OpenAiDoor;
}

export interface ServiceOptions {
  /** Limits given to newly created workspaces. */
  readonly limits: IdentityLimits;
  readonly outputs: OutputStore;
  readonly runPolicy: RunPolicy;
  /** Prices by model path (the spec's table with the config file's overrides). */
  readonly prices: PriceTable;
  /** Whether the data dir can take writes: readiness, job creation and the worker's claims ask it. */
  readonly disk: Pick<DiskCheck, 'check'>;
  /** What an uploaded file is (the engines' media inspection), and the upload limits. */
  readonly inspect: Inspector;
  readonly assets: AssetPolicy;
  readonly bindings: EngineBindings;
  /** Sandbox mode (docs/sandbox.md): job creation checks the prompt's sandbox markers. */
  readonly sandbox?: boolean;
  /** The waiters' backstop poll and limits. */
  readonly waits: JobWaitOptions;
  /** Where job creations, claims, ends and webhook attempts are counted; absent: nowhere. */
  readonly meter?: Meter;
  /** How long an Idempotency-Key is remembered (`idempotency_key_hours`); default 24. */
  readonly idempotencyKeyHours?: number;
  /** Group commit of creates (config `create_batch_max`, `create_batch_window_ms`); default: 64 and 0 ms. */
  readonly createBatching?: CreateBatching;
  /** The ffmpeg and ffprobe in use, for /readyz; absent: not reported. */
  readonly mediaTools?: MediaToolsDetail;
  /** Where a request without a seed gets one (tests inject theirs); default Math.random. */
  readonly random?: RandomSource;
  /** The config's `openai` section; absent: no aliases, default models, a 300 s wait. */
  readonly openai?: OpenAiSettings;
  /** The retention lifetimes (a video's `expires_at`, docs/openai.md); absent: kept forever. */
  readonly retention?: Pick<RetentionConfig, 'outputDays' | 'jobDays'>;
}

export function createServices(store: Store, catalog: Catalog, clock: Clock, opts: ServiceOptions): Services {
  const signals = new JobSignals(store.listen);
  // Every committed change that wakes someone reaches this process's waiters through the store.
  store.onEvent((event) => signals.relay(event));
  const identity = new IdentityService(store, clock, opts.limits);
  const billing = new BillingService(store, clock, opts.prices, identity, (model) => opts.bindings.chain(model)?.engines[0]);
  const meter = opts.meter ?? noMeter;
  const webhooks = new WebhookService(store, clock, identity, Math.random, meter);
  const workerTokens = new WorkerTokenService(store, clock, opts.bindings.remote);
  const idempotency = new Idempotency(store, clock, (opts.idempotencyKeyHours ?? 24) * 3_600_000);
  // One admission for every use case that creates jobs: their creates share group commits.
  const admission = new JobAdmission(store, clock, billing, meter, idempotency, opts.createBatching);
  const engineHealth = new EngineHealth();
  const requests = new ModelRequests(catalog, clock, { sandbox: opts.sandbox === true });
  const services = {
    identity,
    workspace: new WorkspaceService(store, identity),
    tokens: new TokenService(identity),
    jobs: new JobService(store, clock, opts.outputs, billing, webhooks, meter),
    jobDetails: new JobDetailsService(store),
    generation: new GenerationService(store, requests, billing, admission, opts.random),
    models: new ModelService(catalog, opts.prices, clock, { bindings: opts.bindings, health: engineHealth, identity }),
    quotes: new QuoteService(requests, billing),
    runs: new JobRuns(store, clock, opts.runPolicy, billing, webhooks, catalog, meter),
    routes: new JobRoutes(store, clock),
    billing,
    nodeApps: new NodeAppService(store, clock, catalog, opts.bindings.remote),
    nodeAppExecution: new NodeAppExecution(store, clock, catalog, billing, opts.bindings.remote, admission),
    assets: new AssetService(store, clock, opts.outputs, opts.inspect, opts.assets, idempotency),
    styles: new StyleService(store, clock),
    webhooks,
    workerTokens,
    signals,
    waits: new JobWaits(store, signals, clock, opts.waits),
    readiness: new Readiness(store, clock, opts.disk, workerTokens, opts.mediaTools, engineHealth),
    engineHealth,
    backup: new StoreBackup(store, clock),
    idempotency,
    outputs: opts.outputs,
    catalog,
    bindings: opts.bindings,
    clock,
  };
  return { ...services, openai: createOpenAiDoor({ ...services, store, settings: opts.openai ?? DEFAULT_OPENAI_SETTINGS, retention: opts.retention ?? { outputDays: 0, jobDays: 0 } }) };
}
