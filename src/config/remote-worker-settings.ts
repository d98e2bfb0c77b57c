import { hostname } from 'node:os';
import { TOKEN_PREFIX } from '../lib/ids.js';
import { ConfigError, loadConfig } from './config.js';
import { serverUrlOf } from './readers.js';
import type { Config } from './config.js';
import { OPTIONS } from './options.js';

/** Where `mediagen remote-worker` finds its server and token when no flag gives them. */
export const WORKER_URL_ENV = 'MEDIAGEN_URL';
export const WORKER_TOKEN_ENV = 'MEDIAGEN_WORKER_TOKEN';

/** The most jobs one claim may ask for, so the most slots a remote worker has. */
export const MAX_REMOTE_CONCURRENCY = 32;
/** The longest `worker_id` and `pool` the protocol takes. */
const MAX_NAME = 100;

/**
 * The settings `serve` also has that a remote worker uses (its engine's latency and input limits,
 * the shutdown grace, the log level), with the same flags and environment variables.
 */
export const SHARED_OPTIONS = OPTIONS.filter(
  (o) => o.key === 'engine_latency_ms' || o.key === 'shutdown_grace_ms' || o.key === 'log_level' || o.key.startsWith('input_') || o.key === 'ffmpeg_path' || o.key === 'ffprobe_path',
);

export interface RemoteWorkerSettings {
  /** The server's base URL, as the worker reaches it. */
  readonly server: URL;
  readonly token: string;
  /** Patterns the claims carry; undefined: the models this worker's engine can run. */
  readonly models: readonly string[] | undefined;
  readonly pool: string | undefined;
  readonly workerId: string;
  readonly concurrency: number;
  /** The shared settings, in the config's shape (engine latency, input limits, grace, log level). */
  readonly config: Config;
}

export interface RemoteWorkerFlags {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly models?: readonly string[] | undefined;
  readonly pool?: string | undefined;
  readonly 'worker-id'?: string | undefined;
  readonly concurrency?: string | undefined;
  /** A config file whose engine sections (providers, upstream, model_engines, models) this worker runs. */
  readonly config?: string | undefined;
  readonly [shared: string]: unknown;
}

function serverUrl(raw: string, from: string): URL {
  const url = serverUrlOf(raw, from, `give the worker token with --token or ${WORKER_TOKEN_ENV}`);
  url.search = '';
  url.hash = '';
  return url;
}

function name(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length === 0 || raw.length > MAX_NAME || !/^[\x21-\x7E]+$/.test(raw)) {
    throw new ConfigError(`${flag} must be 1 to ${MAX_NAME} printable characters without spaces`);
  }
  return raw;
}

/**
 * `mediagen remote-worker`'s settings: flags first, then the environment (MEDIAGEN_URL,
 * MEDIAGEN_WORKER_TOKEN, and the shared MEDIAGEN_* settings); a config file only with --config. The token is better
 * given by environment: a flag shows in the process list.
 */
export function remoteWorkerSettings(flags: RemoteWorkerFlags, env: Readonly<Record<string, string | undefined>> = process.env): RemoteWorkerSettings {
  const url = flags.server ?? env[WORKER_URL_ENV];
  if (!url) throw new ConfigError(`give the mediagen server's URL with --server or ${WORKER_URL_ENV}`);
  const token = flags.token ?? env[WORKER_TOKEN_ENV];
  if (!token) throw new ConfigError(`give a worker token with --token or ${WORKER_TOKEN_ENV} (mediagen admin worker-token create)`);
  if (!/^[\x21-\x7E]+$/.test(token)) throw new ConfigError('the worker token must be printable ASCII without spaces');
  if (token.startsWith(TOKEN_PREFIX)) throw new ConfigError('that is an API token; a remote worker needs a worker token (mgw_...), made by mediagen admin worker-token create');
  const concurrency = flags.concurrency === undefined ? 1 : Number(flags.concurrency);
  if (!/^\d+$/.test(flags.concurrency ?? '1') || concurrency < 1 || concurrency > MAX_REMOTE_CONCURRENCY) {
    throw new ConfigError(`--concurrency must be an integer from 1 to ${MAX_REMOTE_CONCURRENCY}, got '${flags.concurrency}'`);
  }
  const models = flags.models?.length ? flags.models : undefined;
  for (const m of models ?? []) if (m.trim() === '' || m.length > 200) throw new ConfigError(`--models must be a model path or pattern such as image/*, got '${m}'`);
  // Only the shared settings' own variables, and nothing of serve's. With --config, the file's engine
  // sections too, and the environment for the key variables its providers name.
  const sharedEnv = Object.fromEntries(SHARED_OPTIONS.map((o) => [o.env, env[o.env]]));
  const sharedFlags = Object.fromEntries(SHARED_OPTIONS.map((o) => [o.flag, flags[o.flag]]).filter(([, v]) => v !== undefined));
  const config = flags.config === undefined ? loadConfig({ flags: sharedFlags, env: sharedEnv }) : engineConfig(flags.config, sharedFlags, sharedEnv, env);
  return {
    server: serverUrl(url, flags.server !== undefined ? '--server' : WORKER_URL_ENV),
    token,
    models,
    pool: name(flags.pool, '--pool'),
    workerId: name(flags['worker-id'], '--worker-id') ?? (hostname().replace(/[^\x21-\x7E]/g, '').slice(0, MAX_NAME) || 'remote-worker'),
    concurrency,
    config,
  };
}

/**
 * The config of a worker given `--config`: the file read as `serve` reads it (the worker uses its
 * engine sections, `providers`, `upstream`, `model_engines` and `models`, and the shared settings;
 * the rest is serve's and not used here), the flags over it.
 */
function engineConfig(file: string, flags: Record<string, unknown>, sharedEnv: Record<string, string | undefined>, env: Readonly<Record<string, string | undefined>>): Config {
  return loadConfig({ configFile: file, flags, env: { ...sharedEnv, ...keyVariables(env, sharedEnv) } });
}

/** Every variable but MEDIAGEN_* ones (serve's settings): where providers' keys are named from. */
function keyVariables(env: Readonly<Record<string, string | undefined>>, shared: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('MEDIAGEN_') || k in shared));
}
