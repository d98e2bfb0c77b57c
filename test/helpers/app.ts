import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createRuntime } from '../../src/app/runtime.js';
import type { JobWorker } from '../../src/app/workers.js';
import type { AppDeps } from '../../src/http/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { DeprecationOverride } from '../../src/config/options.js';
import type { Services } from '../../src/services/services.js';
import { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import type { Store } from '../../src/store/store.js';
import type { Engine } from '../../src/engines/engine.js';
import { MODELS } from '../../src/models/registry.js';
import type { RunPolicy } from '../../src/services/jobs/job-runs.js';
import type { JobWaitOptions } from '../../src/services/jobs/job-waits.js';
import { loadConfig } from '../../src/config/config.js';
import { readRoutingSections } from '../../src/config/routing-settings.js';
import { readCustomModels } from '../../src/config/custom-model-settings.js';
import { readProviders, readUpstreams } from '../../src/config/provider-settings.js';
import { readCommandSettings } from '../../src/config/command-settings.js';
import { readComfyuiSettings } from '../../src/config/comfyui-settings.js';
import { readOpenAiSettings } from '../../src/config/openai-settings.js';
import type { Log } from '../../src/lib/log.js';
import type { Worker } from '../../src/worker/worker.js';
import { sqliteBackend } from './backends.js';
import { checkedInject } from './checked-inject.js';
import { waitFor } from './scripted-engine.js';
import { isTerminal } from '../../src/domain/states.js';
import type { Backend } from './backends.js';

export const PUBLIC_URL = 'http://mediagen.test';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly services: Services;
  readonly clock: ManualClock;
  readonly dir: string;
  /** The disk output store under `<dir>/outputs`, served at /outputs. */
  readonly outputs: DiskOutputStore;
  /** The job runner, when the app was made with `worker`; started already. */
  readonly worker: Worker | undefined;
  /** Starts another job worker on the same runtime (a process restarted); closed with the app. */
  startWorker(opts?: { concurrency?: number; pollMs?: number }): Promise<Worker>;
  /** A bearer token of workspace `default` (owner owner@localhost). */
  readonly token: string;
  /** With `metrics.port`: where the metrics server listens (`http://127.0.0.1:<port>`). */
  readonly metricsUrl: string | undefined;
  readonly workspaceId: string;
  /** Creates another workspace with its own owner and token. */
  newWorkspace(name: string): Promise<{ workspaceId: string; token: string }>;
  close(): Promise<void>;
}

/**
 * A real app on a real store (by default a SQLite file in a temporary directory), with a clock the
 * test controls.
 * The default time is after the alias sunset, as in production today.
 */
export async function createTestApp(
  opts: {
    now?: string;
    deprecations?: DeprecationOverride[];
    bodyLimitBytes?: number;
    /**
     * `--allow-private-urls` for the HTTP API (default false, as in production): literal private
     * and loopback URLs are then 400 at the door. The worker's own guard is `worker.allowPrivateUrls`.
     */
    allowPrivateUrls?: boolean;
    /**
     * HTTP settings as `mediagen serve` derives them from its config (`httpOptionsFor`): body
     * limit, timeouts and connection cap (which matter once the app listens), private URLs.
     */
    http?: Pick<AppDeps, 'bodyLimitBytes' | 'allowPrivateUrls' | 'limits'>;
    backend?: Backend;
    /** Limits of the default workspace (and of workspaces made with newWorkspace). */
    limits?: { maxConcurrentJobs: number; maxBackloggedJobs: number };
    runPolicy?: Partial<RunPolicy>;
    /**
     * API balance of the default workspace and of workspaces made with newWorkspace, in micro-USD
     * (default $1,000, so tests that are not about money never meet a 402).
     */
    balanceMicros?: number;
    /** The config file's `prices` (micro-USD per rate). */
    prices?: Record<string, Record<string, number>>;
    /** The data dir readiness and job creation check (default: the test's dir, no free-space floor). */
    storage?: { dir: string; minFreeBytes: number };
    /** Asset upload limits (default: the config's, 75 MiB per file and 10 GiB per workspace). */
    assets?: { maxBytes?: number; quotaBytes?: number };
    /** The public URL the app builds output and asset URLs on (default PUBLIC_URL). */
    publicUrl?: string;
    /** `--sandbox` (docs/sandbox.md): markers checked at creation, and acted on by the worker. */
    sandbox?: boolean;
    /** The config file's `models` (custom model declarations, as written in the file). */
    models?: unknown[];
    /** The config file's `model_engines`: model path or pattern -> engine id or remote:<pool>. */
    modelEngines?: Record<string, string>;
    /** The config file's routing sections as written (docs/routing.md): `model_engines` chains, `engine_limits`, `circuit`; overrides `modelEngines`. */
    routing?: { model_engines?: unknown; engine_limits?: unknown; circuit?: unknown };
    /** `worker_output_max_bytes`: the largest file a remote worker may upload (default 2 GiB). */
    workerOutputMaxBytes?: number;
    /**
     * Runs jobs in this process with this engine (default: none, jobs stay queued); without `engine`,
     * the runtime's own (the local engine and the providers' engines); `log` gets the worker's lines.
     */
    worker?: { engine?: Engine; concurrency?: number; pollMs?: number; allowPrivateUrls?: boolean; log?: Log };
    /**
     * The config file's `providers` and `upstream` (docs/providers.md), read with `env` as the
     * process environment (where the keys are), and `public_url` (the providers' webhook base).
     */
    providers?: { providers: unknown; upstream?: unknown; env: Record<string, string>; publicUrl?: string };
    /** The config file's `commands` (docs/engines.md), read as if the file were in `dir`. */
    commands?: { raw: unknown; dir: string };
    /** The config file's `comfyui` (docs/engines.md), workflow paths relative to `dir`. */
    comfyui?: { raw: unknown; dir: string };
    /** The runtime's clock is the system's (provider runs poll in real time); `clock` then moves nothing. */
    realClock?: boolean;
    /** The HTTP app's logger (default: none). */
    logger?: FastifyBaseLogger;
    /** The job waiters' settings (stream cap, heartbeat). */
    waits?: Partial<JobWaitOptions>;
    /** `metrics_port` (its server listens on metrics_host, 127.0.0.1) and `metrics_token`; default: no metrics. */
    metrics?: { port?: number; token?: string };
    /** `idempotency_key_hours` (default 24). */
    idempotencyKeyHours?: number;
    /** Where a request without a seed gets one (default Math.random). */
    random?: () => number;
    /** The config file's `openai` section, as written in the file (docs/openai.md). */
    openai?: unknown;
    /** The local engine's simulated time per job (`engine_latency_ms`, default 2000). */
    engineLatencyMs?: number;
  } = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-test-'));
  const clock = new ManualClock(opts.now ?? '2026-11-22T12:00:00Z');
  const database = await (opts.backend ?? sqliteBackend).create();
  const store = await database.open();
  const outputs = new DiskOutputStore(join(dir, 'outputs'));
  const limits = opts.limits ?? { maxConcurrentJobs: 4, maxBackloggedJobs: 100 };
  const config = {
    ...loadConfig({ env: {} }),
    // The data dir check looks here; the store and the outputs are the test's own.
    dataDir: opts.storage?.dir ?? dir,
    minFreeDiskBytes: opts.storage?.minFreeBytes ?? 0,
    maxConcurrentJobs: limits.maxConcurrentJobs,
    maxBackloggedJobs: limits.maxBackloggedJobs,
    deprecations: opts.deprecations ?? [],
    prices: opts.prices ?? {},
    sandbox: opts.sandbox ?? false,
    models: readCustomModels(opts.models ?? [], 'test.json'),
    modelEngines: opts.modelEngines ?? {},
    ...(opts.routing ? readRoutingSections(opts.routing, 'test.json') : {}),
    ...(opts.commands ? { commands: readCommandSettings(opts.commands.raw, 'test.json', opts.commands.dir) } : {}),
    ...(opts.comfyui ? { comfyui: readComfyuiSettings(opts.comfyui.raw, 'test.json'), configDir: opts.comfyui.dir } : {}),
    ...(opts.providers
      ? {
          providers: readProviders(opts.providers.providers, 'test.json', opts.providers.env),
          upstreams: opts.providers.upstream === undefined ? {} : readUpstreams(opts.providers.upstream, 'test.json'),
          ...(opts.providers.publicUrl ? { publicUrl: opts.providers.publicUrl } : {}),
        }
      : {}),
    // The remote-input loader reads the config; the HTTP app and the worker take theirs below.
    ...(opts.allowPrivateUrls ? { allowPrivateUrls: true } : {}),
    ...(opts.workerOutputMaxBytes !== undefined ? { workerOutputMaxBytes: opts.workerOutputMaxBytes } : {}),
    ...(opts.assets?.maxBytes !== undefined ? { assetMaxBytes: opts.assets.maxBytes } : {}),
    ...(opts.assets?.quotaBytes !== undefined ? { assetQuotaBytes: opts.assets.quotaBytes } : {}),
    // `host` public on purpose: the metrics server must bind metrics_host (loopback), not it.
    ...(opts.metrics ? { host: '0.0.0.0', metricsPort: opts.metrics.port, metricsToken: opts.metrics.token } : {}),
    ...(opts.idempotencyKeyHours !== undefined ? { idempotencyKeyHours: opts.idempotencyKeyHours } : {}),
    ...(opts.openai !== undefined ? { openai: readOpenAiSettings(opts.openai, 'test.json') } : {}),
    ...(opts.engineLatencyMs !== undefined ? { engineLatencyMs: opts.engineLatencyMs } : {}),
  };
  const runtime = await createRuntime(config, {
    ...(opts.realClock ? {} : { clock }),
    store,
    outputs,
    ...(opts.runPolicy ? { runPolicy: opts.runPolicy } : {}),
    ...(opts.waits ? { waits: opts.waits } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
  const { services } = runtime;
  const app = await runtime.buildHttp({
    publicUrl: () => opts.publicUrl ?? PUBLIC_URL,
    ...(opts.logger ? { logger: opts.logger } : {}),
    http: {
      ...(opts.bodyLimitBytes ? { bodyLimitBytes: opts.bodyLimitBytes } : {}),
      allowPrivateUrls: opts.allowPrivateUrls ?? false,
      ...opts.http,
    },
  });
  const balanceMicros = opts.balanceMicros ?? 1_000_000_000;
  const boot = (await services.identity.bootstrap(balanceMicros))!;
  let jobs: JobWorker | undefined;
  if (opts.worker) {
    jobs = await runtime.createJobWorker(opts.worker.log ?? silentLog, {
      ...(opts.worker.engine ? { engine: opts.worker.engine } : {}),
      concurrency: opts.worker.concurrency ?? 2,
      pollMs: opts.worker.pollMs ?? 1000,
      allowPrivateUrls: opts.worker.allowPrivateUrls ?? false,
    });
    jobs.worker.start();
  }
  const worker = jobs?.worker;
  const metricsServer = await runtime.serveMetrics();
  const extra: JobWorker[] = [];
  return {
    app,
    store,
    services,
    clock,
    dir,
    outputs,
    worker,
    token: boot.secret,
    workspaceId: boot.workspace.id,
    metricsUrl: metricsServer?.url,
    async startWorker(more = {}) {
      const w = await runtime.createJobWorker(opts.worker?.log ?? silentLog, { concurrency: 2, pollMs: 1000, allowPrivateUrls: opts.worker?.allowPrivateUrls ?? false, ...more });
      extra.push(w);
      w.worker.start();
      return w.worker;
    },
    async newWorkspace(name: string) {
      const owner = `owner@${name}.test`;
      const ws = await services.identity.createWorkspace(name, owner);
      const { secret } = await services.identity.createToken(ws.id, 'test', owner);
      await store.billing.topUp({ workspaceId: ws.id, amountMicros: balanceMicros, createdBy: 'test', now: 0 });
      return { workspaceId: ws.id, token: secret };
    },
    async close() {
      await worker?.stop(0);
      await jobs?.close();
      for (const w of extra) {
        await w.worker.stop(0);
        await w.close();
      }
      await metricsServer?.close();
      await app.close();
      await runtime.closeEngines();
      await store.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const silentLog: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

export type Json = Record<string, unknown>;

/**
 * POST a JSON body to a generation endpoint path (without the /generate/ prefix). `generate`,
 * `get` and `del` check each response against its route's declared schema (checked-inject.ts).
 */
export function generate(
  t: TestApp,
  modelPath: string,
  body: unknown,
  headers: Record<string, string> = {},
  token: string = t.token,
): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, {
    method: 'POST',
    url: `/generate/${modelPath}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

/**
 * POST a JSON body to the endpoint that creates jobs of `modelPath`: its own route when it has one
 * (style training: /styles/train), else /generate/{path}. Checked like `generate`.
 */
export function createJob(
  t: TestApp,
  modelPath: string,
  body: unknown,
  headers: Record<string, string> = {},
  token: string = t.token,
): Promise<LightMyRequestResponse> {
  const route = MODELS.find((m) => m.path === modelPath)?.route;
  if (!route) return generate(t, modelPath, body, headers, token);
  return checkedInject(t.app, {
    method: 'POST',
    url: route,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

export function get(t: TestApp, url: string, token: string = t.token): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, { method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

export function del(t: TestApp, url: string, token: string = t.token): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, { method: 'DELETE', url, headers: { authorization: `Bearer ${token}` } });
}

/** Asserts an error response has the catalogue's shape and returns its message. */
export function errorOf(res: LightMyRequestResponse, status: number): string {
  if (res.statusCode !== status) {
    throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  }
  const body = res.json() as Json;
  if (typeof body.error !== 'string' || body.error.length === 0) throw new Error(`no error string in ${res.body}`);
  return body.error;
}

/**
 * Follows `next_cursor` from `path` (which carries its own query, at least `?limit=N`) to the last
 * page; each page must hold at most `limit` items. Returns every item in order and the page count.
 */
export async function walkPages<T>(t: TestApp, path: string, token: string = t.token): Promise<{ items: T[]; pages: number }> {
  const limit = Number(new URL(path, 'http://x').searchParams.get('limit') ?? 100);
  const items: T[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await get(t, `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    const page = res.json() as { items: T[]; next_cursor: string | null };
    if (page.items.length > limit) throw new Error(`${path}: ${page.items.length} items on a page of ${limit}`);
    items.push(...page.items);
    cursor = page.next_cursor;
    if (++pages >= 1000) throw new Error(`${path}: more than 1000 pages`);
  } while (cursor);
  return { items, pages };
}

/** Invalid `limit` and `cursor` values of every paginated list, with the parameter each names. */
export const BAD_PAGE_QUERIES: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['cursor=yesterday', 'cursor'],
    ['cursor=2026-02-30T00:00:00Z', 'cursor'],
    ['cursor=2026-11-22', 'cursor'],
];

/** The job as GET shows it once it has reached a terminal status (real time: a worker runs it). */
export function jobWhenEnded<T extends { status: string }>(t: TestApp, id: string, timeoutMs = 60_000): Promise<T> {
  return waitFor(
    async () => {
      const job = (await get(t, `/jobs/${id}`)).json<T>();
      return isTerminal(job.status) ? job : undefined;
    },
    `job ${id} to end`,
    timeoutMs,
  );
}

/** GET /jobs/{id} until the job is completed, failed or cancelled; its last view. */
export function jobEnd(t: TestApp, id: string, timeoutMs = 20_000): Promise<Json & { status: string }> {
  return waitFor(
    async () => {
      const job = (await get(t, `/jobs/${id}`)).json<Json & { status: string }>();
      return isTerminal(job.status as never) ? job : undefined;
    },
    `job ${id} to end`,
    timeoutMs,
  );
}
