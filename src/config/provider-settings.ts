import { isPlainObject } from '../lib/plain-object.js';
import { PROVIDER_TYPE_LIST, PROVIDER_TYPES, providerTypeOf } from './provider-types.js';
import type { ProviderType } from './provider-types.js';
import { ConfigError, shownUrl } from './readers.js';

/**
 * The config file's `providers` (hosted services models can be bound to as `provider:<name>`) and
 * `upstream` (how a built-in model maps onto its provider; a custom model carries its own). Read
 * and checked here; docs/providers.md is the user's side of it. The key is read from the
 * environment variable the block names, here at start, and kept behind a function so no dump of
 * the settings carries it.
 */

export { PROVIDER_TYPES } from './provider-types.js';
export type { ProviderType } from './provider-types.js';

export interface ProviderSettings {
  /** Its key in `providers`: models bind to it as `provider:<name>`. */
  readonly name: string;
  readonly type: ProviderType;
  /** As configured (or the type's default), normalised by the type (config/provider-types.ts): no trailing slash, `/v1` added where its API has it. */
  readonly baseUrl: string;
  /** The environment variable holding the secret: named in messages, never the secret itself. */
  readonly apiKeyEnv: string;
  /** The secret. A function, so no JSON.stringify or log of the settings carries it. */
  readonly apiKey: () => string;
  /** Where its webhook signing keys are published (JWKS), for a type that has the setting (fal). */
  readonly webhookJwksUrl?: string;
  /** Its storage API's base URL for uploads, for a type that has the setting (fal). */
  readonly storageUrl?: string;
  /** How long one HTTP call to the provider may take, in ms (a synchronous OpenAI generation included). */
  readonly requestTimeoutMs: number;
  /**
   * Tries of a submission the provider provably did not take (a 429, a connection that never
   * opened) before the job fails `upstream_unavailable`; calls about a job the provider holds
   * retry until the job's deadline instead (src/engines/upstream/upstream-retry.ts).
   */
  readonly maxAttempts: number;
  /** The first wait between status polls; it doubles up to POLL_MAX_MS. */
  readonly pollIntervalMs: number;
  /** Media inputs up to this size go to the provider as `data:` URIs; larger ones through its file API. */
  readonly inlineMaxBytes: number;
}

/** A model's mapping onto its provider (`upstream` in a custom model, or an entry of the top-level `upstream`). */
export interface UpstreamBinding {
  /** The provider's model: `owner/name[:version]`, `fal-ai/flux/dev`, `gpt-image-1`, a krea path. Absent: a krea upstream calls our own path. */
  readonly model?: string;
  /** The provider input's template (docs/providers.md, "Templates"); absent: the request body as it is. */
  readonly input?: unknown;
  /** Where the provider's answer holds the files; absent: the provider type's default. */
  readonly outputs?: readonly string[];
  /** ComfyUI bindings (`comfyui:<name>`): the API-format workflow, inline or a path relative to the config file, as written; checked by the ComfyUI engine. */
  readonly workflow?: unknown;
  /** ComfyUI bindings: request field -> `{node, input}` (or an array of them), as written. */
  readonly inputs?: unknown;
  /** ComfyUI bindings: the output node ids whose files are the job's, as written. */
  readonly outputNodes?: unknown;
}

const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const COMMON_KEYS = ['type', 'base_url', 'api_key_env', 'request_timeout_ms', 'max_attempts', 'poll_interval_ms', 'inline_max_bytes'];
/** Every key a provider block may have: the common ones, then each type's own. */
const KEYS = [...new Set([...COMMON_KEYS, ...PROVIDER_TYPE_LIST.flatMap((t) => Object.keys(t.extraUrls))])];
const INTS = {
  request_timeout_ms: { min: 1000, max: 3_600_000, default: 120_000 },
  max_attempts: { min: 1, max: 100, default: 5 },
  poll_interval_ms: { min: 10, max: 60_000, default: 1000 },
  inline_max_bytes: { min: 0, max: 64 * 1024 * 1024, default: 1024 * 1024 },
} as const;

/** An absolute http(s) URL without credentials, query or fragment; an error quotes it without its credentials (shownUrl). */
function httpUrl(raw: unknown, where: string): string {
  if (typeof raw === 'string') {
    let u: URL | undefined;
    try {
      u = new URL(raw);
    } catch {
      /* refused below */
    }
    if (u && (u.username || u.password)) {
      throw new ConfigError(`${where} must be an absolute http(s) URL without credentials, query or fragment; it carries credentials (user:password@), which are never used: the key goes in the variable api_key_env names; got ${shownUrl(raw)}`);
    }
    if (u && (u.protocol === 'http:' || u.protocol === 'https:') && !u.search && !u.hash) return raw.replace(/\/+$/, '');
  }
  throw new ConfigError(`${where} must be an absolute http(s) URL without credentials, query or fragment, got ${shownUrl(raw)}`);
}

function readProvider(name: string, raw: unknown, file: string, env: Readonly<Record<string, string | undefined>>): ProviderSettings {
  const where = `${file}: providers.${name}`;
  if (!NAME_RE.test(name)) throw new ConfigError(`${file}: providers: '${name.slice(0, 80)}' is not a provider name; a name is 1 to 63 of a-z, 0-9, _ and -`);
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"type": "replicate", "api_key_env": "REPLICATE_API_TOKEN"}`);
  const extra = Object.keys(raw).find((k) => !KEYS.includes(k));
  if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are ${KEYS.join(', ')}`);
  const facts = typeof raw.type === 'string' ? providerTypeOf(raw.type) : undefined;
  if (!facts) throw new ConfigError(`${where}.type must be one of ${PROVIDER_TYPES.join(', ')}, got ${JSON.stringify(raw.type)?.slice(0, 80)}`);
  const keyEnv = raw.api_key_env;
  if (typeof keyEnv !== 'string' || !ENV_RE.test(keyEnv)) throw new ConfigError(`${where}.api_key_env must name the environment variable that holds the key, e.g. "REPLICATE_API_TOKEN"`);
  const key = env[keyEnv];
  if (key === undefined) throw new ConfigError(`${where}: the environment variable ${keyEnv} (api_key_env) is not set; it must hold the provider's key`);
  if (key.trim() === '') throw new ConfigError(`${where}: the environment variable ${keyEnv} (api_key_env) is set but empty; it must hold the provider's key`);
  const secret = key.trim();
  const ints = Object.fromEntries(
    Object.entries(INTS).map(([k, spec]) => {
      const v = raw[k] ?? (k === 'request_timeout_ms' ? facts.defaultRequestTimeoutMs : spec.default);
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < spec.min || v > spec.max) throw new ConfigError(`${where}.${k} must be an integer from ${spec.min} to ${spec.max}, got ${JSON.stringify(v)}`);
      return [k, v];
    }),
  ) as Record<keyof typeof INTS, number>;
  const urls: Record<string, string> = {};
  for (const k of KEYS.filter((key) => !COMMON_KEYS.includes(key))) {
    const own = facts.extraUrls[k];
    if (own) urls[own.setting] = raw[k] === undefined ? own.default : httpUrl(raw[k], `${where}.${k}`);
    else if (raw[k] !== undefined) throw new ConfigError(`${where}.${k} is a setting of ${typesWith(k)} providers only`);
  }
  return Object.freeze({
    name,
    type: facts.name as ProviderType,
    baseUrl: facts.baseUrl(raw.base_url === undefined ? facts.defaultBaseUrl : httpUrl(raw.base_url, `${where}.base_url`)),
    apiKeyEnv: keyEnv,
    apiKey: () => secret,
    ...urls,
    requestTimeoutMs: ints.request_timeout_ms,
    maxAttempts: ints.max_attempts,
    pollIntervalMs: ints.poll_interval_ms,
    inlineMaxBytes: ints.inline_max_bytes,
  });
}

const typesWith = (key: string): string => PROVIDER_TYPE_LIST.filter((t) => Object.hasOwn(t.extraUrls, key)).map((t) => t.name).join(', ');

/** `providers`: name -> provider block. Each key variable must be set (and non-empty) at start. */
export function readProviders(raw: unknown, file: string, env: Readonly<Record<string, string | undefined>>): ProviderSettings[] {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: providers must be an object of provider name to {"type", "api_key_env", ...}`);
  return Object.entries(raw).map(([name, block]) => readProvider(name, block, file, env));
}

/** One `upstream` block: `where` names it in messages (`upstream.image/*`, `models[0] (image/acme/x).upstream`). */
export function readUpstreamBinding(raw: unknown, where: string): UpstreamBinding {
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"model": "black-forest-labs/flux-schnell", "input": {"prompt": "{{prompt}}"}}`);
  const keys = ['model', 'input', 'outputs', 'workflow', 'inputs', 'output_nodes'];
  const extra = Object.keys(raw).find((k) => !keys.includes(k));
  if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are ${keys.join(', ')}`);
  if (raw.model !== undefined && (typeof raw.model !== 'string' || raw.model.trim() === '' || raw.model.length > 300)) throw new ConfigError(`${where}.model must be the provider's model, e.g. "owner/name"`);
  if (raw.input !== undefined && !isPlainObject(raw.input)) throw new ConfigError(`${where}.input must be a JSON object: the provider's input, with "{{field}}" where a request field goes`);
  let outputs: string[] | undefined;
  if (raw.outputs !== undefined) {
    const list = typeof raw.outputs === 'string' ? [raw.outputs] : raw.outputs;
    if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && OUTPUT_PATH_RE.test(p))) {
      throw new ConfigError(`${where}.outputs must be a path or an array of paths into the provider's answer, such as "images[*].url" or ["video.url"]`);
    }
    outputs = [...(list as string[])];
  }
  return Object.freeze({
    ...(raw.model !== undefined ? { model: (raw.model as string).trim() } : {}),
    ...(raw.input !== undefined ? { input: structuredClone(raw.input) } : {}),
    ...(outputs ? { outputs: Object.freeze(outputs) } : {}),
    ...(raw.workflow !== undefined ? { workflow: structuredClone(raw.workflow) } : {}),
    ...(raw.inputs !== undefined ? { inputs: structuredClone(raw.inputs) } : {}),
    ...(raw.output_nodes !== undefined ? { outputNodes: structuredClone(raw.output_nodes) } : {}),
  });
}

/** `a.b[*].c`, `output`, `data[0].url`: names of letters, digits, `_` and `-`, each optionally indexed. */
export const OUTPUT_PATH_RE = /^[A-Za-z0-9_-]+(?:\[(?:\*|\d+)\])*(?:\.[A-Za-z0-9_-]+(?:\[(?:\*|\d+)\])*)*$/;

/** The top-level `upstream`: model path or pattern -> upstream block, for built-in models bound to a provider. */
export function readUpstreams(raw: unknown, file: string): Record<string, UpstreamBinding> {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: upstream must be an object of model path or pattern to {"model", "input", "outputs"}`);
  return Object.fromEntries(Object.entries(raw).map(([key, block]) => [key, readUpstreamBinding(block, `${file}: upstream.${key}`)]));
}
