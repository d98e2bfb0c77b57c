/**
 * The provider types, each declared once: what the config reader, the provider HTTP client, the
 * binding check and the engine need to know of a type, as data. The list is the one place a type
 * is named; its adapter (the code that speaks the provider's API) is bound to its name in
 * engines/providers/adapters.ts, whose type makes the compiler ask for one per entry here. The
 * adapter cannot sit in this list: config/ is below engines/ (test/unit/layers.test.ts), and the
 * config must know the types to check a provider block at load, before any engine exists.
 *
 * Adding a type: its adapter module, its entry here, its line in ADAPTERS, its section in
 * docs/providers.md.
 */

/** The settings a type-specific key of a provider block fills (fal's `storage_url`, `webhook_jwks_url`). */
export type ProviderUrlSetting = 'storageUrl' | 'webhookJwksUrl';

export interface ProviderTypeFacts {
  /** The `type` of a provider block. */
  readonly name: string;
  /** How its API takes the key: `Authorization: <scheme> <key>` (its API reference; fal: `Key`). */
  readonly authScheme: 'Bearer' | 'Key';
  /** The base URL when none is configured: the one its own SDK uses. */
  readonly defaultBaseUrl: string;
  /** The base URL calls are made against, from a configured one (no trailing slash; a version segment added where the SDK has one). */
  readonly baseUrl: (configured: string) => string;
  /** URL keys of a provider block that only this type takes: the setting each fills and its default. */
  readonly extraUrls: Readonly<Record<string, { readonly setting: ProviderUrlSetting; readonly default: string }>>;
  /** Whether a model bound to it must name the provider's model (`upstream.model`); a krea upstream calls our own path by default. */
  readonly needsUpstreamModel: boolean;
  /**
   * Whether it deduplicates submissions by idempotency key (our job id): a submission whose answer
   * was lost may be sent again without paying twice (a mediagen, `Idempotency-Key`). The others
   * cannot tell a retry from a second job.
   */
  readonly deduplicates: boolean;
  /**
   * `request_timeout_ms` when none is configured. An OpenAI call is the whole generation (a
   * high-quality gpt-image run takes minutes): its SDK's own default, 600 s (openai/openai-node
   * `DEFAULT_TIMEOUT`), so a slow image is not cut off, and paid for, before it is answered. The
   * other types' calls are short submissions and polls: 120 s.
   */
  readonly defaultRequestTimeoutMs: number;
}

const trimmed = (url: string): string => url.trim().replace(/\/+$/, '');

/** As its SDK takes it, with a version segment: one configured without (`http://localai:8080`) gets `/v1`. */
function versioned(configured: string): string {
  const url = trimmed(configured);
  return /\/v\d+$/i.test(new URL(url).pathname) ? url : `${url}/v1`;
}

/** fal's queue: its synchronous host (`fal.run`, no queue, no webhooks) is the same path on `queue.fal.run`. */
function falQueue(configured: string): string {
  return trimmed(configured).replace(/^https:\/\/fal\.run(?=\/|$)/i, 'https://queue.fal.run');
}

export const PROVIDER_TYPE_LIST = [
  // Replicate's HTTP API and replicate/replicate-javascript (baseUrl with /v1).
  { name: 'replicate', authScheme: 'Bearer', defaultBaseUrl: 'https://api.replicate.com/v1', baseUrl: versioned, extraUrls: {}, needsUpstreamModel: true, deduplicates: false, defaultRequestTimeoutMs: 120_000 },
  // fal's queue; storage on its REST API (fal-js getRestApiUrl), webhook keys where fal's webhook docs publish them.
  {
    name: 'fal',
    authScheme: 'Key',
    defaultBaseUrl: 'https://queue.fal.run',
    baseUrl: falQueue,
    extraUrls: {
      storage_url: { setting: 'storageUrl', default: 'https://rest.fal.ai' },
      webhook_jwks_url: { setting: 'webhookJwksUrl', default: 'https://rest.alpha.fal.ai/.well-known/jwks.json' },
    },
    needsUpstreamModel: true,
    deduplicates: false,
    defaultRequestTimeoutMs: 120_000,
  },
  // OpenAI's Images API and openai/openai-node (baseURL with /v1), or any server speaking it.
  { name: 'openai', authScheme: 'Bearer', defaultBaseUrl: 'https://api.openai.com/v1', baseUrl: versioned, extraUrls: {}, needsUpstreamModel: true, deduplicates: false, defaultRequestTimeoutMs: 600_000 },
  // The original API (docs/spec) or another mediagen: Idempotency-Key on submissions.
  { name: 'krea', authScheme: 'Bearer', defaultBaseUrl: 'https://api.krea.ai', baseUrl: trimmed, extraUrls: {}, needsUpstreamModel: false, deduplicates: true, defaultRequestTimeoutMs: 120_000 },
] as const satisfies readonly ProviderTypeFacts[];

export type ProviderType = (typeof PROVIDER_TYPE_LIST)[number]['name'];

/** The type names, in the list's order. */
export const PROVIDER_TYPES: readonly ProviderType[] = Object.freeze(PROVIDER_TYPE_LIST.map((t) => t.name));

const BY_NAME: ReadonlyMap<string, ProviderTypeFacts> = new Map(PROVIDER_TYPE_LIST.map((t) => [t.name, t]));

/** A type's facts; undefined for a name that is no type. */
export function providerTypeOf(name: string): ProviderTypeFacts | undefined {
  return BY_NAME.get(name);
}

/** A known type's facts. */
export function providerType(type: ProviderType): ProviderTypeFacts {
  return BY_NAME.get(type)!;
}
