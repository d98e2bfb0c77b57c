import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { MicroUsd } from '../domain/money.js';
import { parseDateOnly } from '../lib/time.js';
import { DEFAULTS, OPTIONS } from './options.js';
import type { DeprecationOverride, ModelEngines } from './options.js';
import { sandboxRefusal } from './sandbox-settings.js';
import { readCustomModels } from './custom-model-settings.js';
import type { CustomModelDecl } from './custom-model-settings.js';
import { ConfigError } from './readers.js';
import { readOutputStore } from './storage.js';
import { readPrices } from './model-sections.js';
import { DEFAULT_CIRCUIT, firstEngines, readCircuit, readEngineLimits, readModelEngineChains } from './routing-settings.js';
import type { CircuitSettings, EngineChainSpec, EngineLimit, RoutingConfig } from './routing-settings.js';
import { readProviders, readUpstreams } from './provider-settings.js';
import { coerce } from './coerce.js';
import { readCommandSettings } from './command-settings.js';
import { readComfyuiSettings } from './comfyui-settings.js';
import type { ComfyuiSettings } from './comfyui-settings.js';
import type { CommandSettings } from './command-settings.js';
import type { Value } from './coerce.js';
import type { ProviderSettings, UpstreamBinding } from './provider-settings.js';
import type { OutputStoreConfig, RetentionConfig } from './storage.js';
import { DEFAULT_OPENAI_SETTINGS, readOpenAiSettings } from './openai-settings.js';
import type { OpenAiSettings } from './openai-settings.js';
export { publicUrlFor } from './public-url.js';

export { ConfigError } from './readers.js';
export type { OutputStoreConfig, RetentionConfig } from './storage.js';

/** With the routing sections (docs/routing.md): chains, `engine_limits`, `circuit` (config/routing-settings.ts). */
export interface Config extends RoutingConfig {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** PostgreSQL connection URL; undefined means the embedded SQLite store. */
  readonly databaseUrl: string | undefined;
  /** Undefined until known: by default it is derived from host and the port actually bound. */
  readonly publicUrl: string | undefined;
  readonly allowPrivateUrls: boolean;
  readonly engineLatencyMs: number;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** After an answer sent before its request's body arrived: how long, and how many bytes of, the rest is read and dropped. */
  readonly lingerTimeoutMs: number;
  readonly lingerMaxBytes: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
  readonly logLevel: string;
  readonly role: 'all' | 'api' | 'worker';
  readonly workerConcurrency: number;
  readonly jobTimeoutMs: number;
  /** Per-model timeouts from the config file's `job_timeouts_ms`, by model path. */
  readonly modelTimeoutsMs: Readonly<Record<string, number>>;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly shutdownGraceMs: number;
  readonly janitorIntervalMs: number;
  readonly inputMaxBytes: number;
  /** Largest upload POST /assets accepts. */
  readonly assetMaxBytes: number;
  /** Bytes of live assets one workspace may keep; 0: no quota. */
  readonly assetQuotaBytes: number;
  /** Largest output file a remote worker may upload. */
  readonly workerOutputMaxBytes: number;
  readonly inputTimeoutMs: number;
  /** What an input may claim and cost to decode (docs/inputs.md). */
  readonly inputMaxVideoSeconds: number;
  readonly inputMaxVideoFrames: number;
  readonly inputMaxVideoPixels: number;
  readonly inputMaxStreams: number;
  readonly inputMaxImagePixels: number;
  readonly inputDecodeTimeoutMs: number;
  readonly inputDecodeCpuSeconds: number;
  /** ffmpeg and ffprobe to run; undefined: PATH, else the bundled ones (src/engines/media/locate-binary.ts). */
  readonly ffmpegPath: string | undefined;
  readonly ffprobePath: string | undefined;
  readonly maxFaultRetries: number;
  readonly minFreeDiskBytes: number;
  /** Where stored files live: the disk under the data dir, or an S3-compatible bucket (src/outputs/). */
  readonly outputStore: OutputStoreConfig;
  /** How output URLs answer: `serve` streams the bytes; `presign` redirects to a short-lived bucket URL. */
  readonly outputUrls: 'serve' | 'presign';
  readonly presignTtlSeconds: number;
  /** Lifetimes in days; 0 keeps forever (src/services/upkeep/retention.ts). */
  readonly retention: RetentionConfig;
  /** Hours an Idempotency-Key is remembered. */
  readonly idempotencyKeyHours: number;
  /** Group commit of creates: at most `maxBatch` per transaction; an idle server waits `windowMs` for company. */
  readonly createBatching: { readonly maxBatch: number; readonly windowMs: number };
  /** /metrics on its own port (no token), and/or on the API port behind this token; neither: no /metrics. */
  readonly metricsPort: number | undefined;
  /** What the metrics port binds: its own setting, not `host`, so a public API does not expose token-less metrics. */
  readonly metricsHost: string;
  readonly metricsToken: string | undefined;
  /** On SIGTERM, how long /readyz answers 503 before the listener closes. */
  readonly drainDelayMs: number;
  /** Sandbox mode (docs/sandbox.md): never with production settings (config/sandbox-settings.ts). */
  readonly sandbox: boolean;
  readonly deprecations: readonly DeprecationOverride[];
  /** The config file's `prices`: model path -> rate name -> micro-USD. Names are checked later. */
  readonly prices: Readonly<Record<string, Readonly<Record<string, MicroUsd>>>>;
  /**
   * The config file's `model_engines`: model path or pattern (`video/*`) -> engine id or `remote:<pool>`.
   * Names are checked by buildBindings (src/engines/bindings.ts), engines by the engine router.
   */
  readonly modelEngines: ModelEngines;
  /** The config file's `models`: models declared by the operator, served by remote workers (src/models/custom-models.ts). */
  readonly models: readonly CustomModelDecl[];
  /** The config file's `providers`: hosted services models are bound to as `provider:<name>` (docs/providers.md). */
  readonly providers: readonly ProviderSettings[];
  /** The config file's `upstream`: built-in model path or pattern -> how it maps onto its provider. */
  readonly upstreams: Readonly<Record<string, UpstreamBinding>>;
  /** The directory of the config file, which paths in it are relative to (ComfyUI workflows); the working directory without one. */
  readonly configDir: string;
  /** The config file's `comfyui`: ComfyUI servers, bound as `comfyui:<name>` (docs/engines.md). */
  readonly comfyui: readonly ComfyuiSettings[];
  /** The config file's `commands`: model servers run as long-lived processes, bound as `command:<name>` (docs/engines.md). */
  readonly commands: readonly CommandSettings[];
  /** The config file's `openai`: aliases, default models and the wait of the OpenAI-compatible door (docs/openai.md). */
  readonly openai: OpenAiSettings;
}

/** How a URL-valued setting is checked; by type, not by position in OPTIONS, which grows. */
const URL_SPEC = OPTIONS.find((o) => o.type === 'url')!;

function readDeprecations(raw: unknown, file: string): DeprecationOverride[] {
  if (!Array.isArray(raw)) throw new ConfigError(`${file}: deprecations must be an array`);
  return raw.map((d, i) => {
    const where = `${file}: deprecations[${i}]`;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new ConfigError(`${where} must be an object`);
    const o = d as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (!['model', 'sunset_date', 'replacement', 'migration_url'].includes(k)) {
        throw new ConfigError(`${where}: unknown key '${k}'`);
      }
    }
    if (typeof o.model !== 'string') throw new ConfigError(`${where}.model must be a model path`);
    if (typeof o.sunset_date !== 'string' || parseDateOnly(o.sunset_date) === undefined) {
      throw new ConfigError(`${where}.sunset_date must be a date such as 2027-01-01`);
    }
    if (o.replacement !== undefined && typeof o.replacement !== 'string') {
      throw new ConfigError(`${where}.replacement must be a string`);
    }
    if (o.migration_url !== undefined) coerce(URL_SPEC, o.migration_url, `${where}.migration_url`);
    return {
      model: o.model,
      sunset_date: o.sunset_date,
      ...(o.replacement !== undefined ? { replacement: o.replacement as string } : {}),
      ...(o.migration_url !== undefined ? { migration_url: o.migration_url as string } : {}),
    };
  });
}

const TIMEOUT_SPEC = OPTIONS.find((o) => o.key === 'job_timeout_ms')!;

/** `job_timeouts_ms`: model path -> milliseconds. Model paths are checked against the catalog later. */
function readModelTimeouts(raw: unknown, file: string): Record<string, number> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${file}: job_timeouts_ms must be an object of model path to milliseconds`);
  }
  return Object.fromEntries(
    Object.entries(raw).map(([model, ms]) => [model, coerce(TIMEOUT_SPEC, ms, `${file}: job_timeouts_ms.${model}`) as number]),
  );
}

/**
 * Settings from, in rising precedence: defaults, the JSON config file, MEDIAGEN_* environment
 * variables, command-line flags. The only reader of process.env and config files.
 */
export function loadConfig(opts: {
  flags?: Readonly<Record<string, unknown>>;
  env?: Readonly<Record<string, string | undefined>>;
  configFile?: string;
}): Config {
  const env = opts.env ?? process.env;
  const flags = opts.flags ?? {};
  const values: Record<string, Value | undefined> = { ...DEFAULTS };
  let deprecations: DeprecationOverride[] = [];
  let modelTimeoutsMs: Record<string, number> = {};
  let prices: Record<string, Record<string, MicroUsd>> = {};
  let modelEngines: Record<string, string> = {};
  let engineChains: Record<string, EngineChainSpec> = {};
  let engineLimits: Record<string, EngineLimit> = {};
  let circuit: CircuitSettings = DEFAULT_CIRCUIT;
  let models: CustomModelDecl[] = [];
  let providers: ProviderSettings[] = [];
  let upstreams: Record<string, UpstreamBinding> = {};
  let commands: CommandSettings[] = [];
  let comfyui: ComfyuiSettings[] = [];
  let openai: OpenAiSettings = DEFAULT_OPENAI_SETTINGS;

  const file = opts.configFile ?? env.MEDIAGEN_CONFIG;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      // V8 quotes the text around a syntax error, which may be part of a URL's credentials: dropped.
      throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' is not valid JSON')}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`${file}: must be a JSON object`);
    }
    // The sections of the file that are not single settings, each with its reader.
    const sections: Readonly<Record<string, (raw: unknown) => unknown>> = {
      deprecations: (raw) => (deprecations = readDeprecations(raw, file)),
      prices: (raw) => (prices = readPrices(raw, file)),
      model_engines: (raw) => (modelEngines = firstEngines((engineChains = readModelEngineChains(raw, file)))),
      engine_limits: (raw) => (engineLimits = readEngineLimits(raw, file)),
      circuit: (raw) => (circuit = readCircuit(raw, file)),
      models: (raw) => (models = readCustomModels(raw, file)),
      providers: (raw) => (providers = readProviders(raw, file, env)),
      upstream: (raw) => (upstreams = readUpstreams(raw, file)),
      comfyui: (raw) => (comfyui = readComfyuiSettings(raw, file)),
      commands: (raw) => (commands = readCommandSettings(raw, file, dirname(resolve(file)))),
      job_timeouts_ms: (raw) => (modelTimeoutsMs = readModelTimeouts(raw, file)),
      openai: (raw) => (openai = readOpenAiSettings(raw, file)),
    };
    for (const [key, raw] of Object.entries(parsed)) {
      if (Object.hasOwn(sections, key)) {
        sections[key]!(raw);
        continue;
      }
      const spec = OPTIONS.find((o) => o.key === key);
      if (!spec) throw new ConfigError(`${file}: unknown key '${key}'`);
      values[key] = coerce(spec, raw, `${file}: ${key}`);
    }
  }
  for (const spec of OPTIONS) {
    const raw = env[spec.env];
    if (raw !== undefined && raw !== '') values[spec.key] = coerce(spec, raw, spec.env);
  }
  for (const spec of OPTIONS) {
    const raw = flags[spec.flag];
    if (raw !== undefined) values[spec.key] = coerce(spec, raw, `--${spec.flag}`);
  }

  if (values.sandbox === true) {
    const remoteModels = Object.entries(modelEngines).filter(([, id]) => id.startsWith('remote:'));
    const refusal = sandboxRefusal({ nodeEnv: env.NODE_ENV, databaseUrl: values.database_url as string | undefined, remoteModels });
    if (refusal) throw new ConfigError(refusal);
  }
  return Object.freeze({
    port: values.port as number,
    host: values.host as string,
    dataDir: resolve(values.data_dir as string),
    databaseUrl: values.database_url as string | undefined,
    publicUrl: values.public_url as string | undefined,
    allowPrivateUrls: values.allow_private_urls as boolean,
    engineLatencyMs: values.engine_latency_ms as number,
    bodyLimitBytes: values.body_limit_bytes as number,
    requestTimeoutMs: values.request_timeout_ms as number,
    headersTimeoutMs: values.headers_timeout_ms as number,
    keepAliveTimeoutMs: values.keep_alive_timeout_ms as number,
    lingerTimeoutMs: values.linger_timeout_ms as number,
    lingerMaxBytes: values.linger_max_bytes as number,
    maxConnections: values.max_connections as number,
    maxConcurrentJobs: values.max_concurrent_jobs as number,
    maxBackloggedJobs: values.max_backlogged_jobs as number,
    logLevel: values.log_level as string,
    role: values.role as Config['role'],
    workerConcurrency: (values.worker_concurrency as number | undefined) ?? availableParallelism(),
    jobTimeoutMs: values.job_timeout_ms as number,
    modelTimeoutsMs: Object.freeze(modelTimeoutsMs),
    leaseMs: values.lease_ms as number,
    pollIntervalMs: values.poll_interval_ms as number,
    shutdownGraceMs: values.shutdown_grace_ms as number,
    janitorIntervalMs: values.janitor_interval_ms as number,
    inputMaxBytes: values.input_max_bytes as number,
    assetMaxBytes: values.asset_max_bytes as number,
    assetQuotaBytes: values.asset_quota_bytes as number,
    workerOutputMaxBytes: values.worker_output_max_bytes as number,
    inputTimeoutMs: values.input_timeout_ms as number,
    inputMaxVideoSeconds: values.input_max_video_seconds as number,
    inputMaxVideoFrames: values.input_max_video_frames as number,
    inputMaxVideoPixels: values.input_max_video_pixels as number,
    inputMaxStreams: values.input_max_streams as number,
    inputMaxImagePixels: values.input_max_image_pixels as number,
    inputDecodeTimeoutMs: values.input_decode_timeout_ms as number,
    inputDecodeCpuSeconds: values.input_decode_cpu_seconds as number,
    ffmpegPath: values.ffmpeg_path as string | undefined,
    ffprobePath: values.ffprobe_path as string | undefined,
    maxFaultRetries: values.max_fault_retries as number,
    minFreeDiskBytes: values.min_free_disk_bytes as number,
    outputStore: readOutputStore(values, env),
    outputUrls: values.output_urls as Config['outputUrls'],
    presignTtlSeconds: values.presign_ttl_seconds as number,
    retention: Object.freeze({ outputDays: values.output_retention_days as number, jobDays: values.job_retention_days as number,
      assetDays: values.asset_retention_days as number, webhookLogDays: values.webhook_log_retention_days as number }),
    idempotencyKeyHours: values.idempotency_key_hours as number,
    createBatching: Object.freeze({ maxBatch: values.create_batch_max as number, windowMs: values.create_batch_window_ms as number }),
    metricsPort: values.metrics_port as number | undefined,
    metricsHost: values.metrics_host as string,
    metricsToken: values.metrics_token as string | undefined,
    drainDelayMs: values.drain_delay_ms as number,
    sandbox: values.sandbox as boolean,
    deprecations: Object.freeze(deprecations),
    prices: Object.freeze(prices),
    modelEngines: Object.freeze(modelEngines),
    engineChains: Object.freeze(engineChains),
    engineLimits: Object.freeze(engineLimits),
    circuit,
    models: Object.freeze(models),
    providers: Object.freeze(providers),
    upstreams: Object.freeze(upstreams),
    commands: Object.freeze(commands),
    comfyui: Object.freeze(comfyui),
    openai,
    configDir: file ? dirname(resolve(file)) : process.cwd(),
  });
}
