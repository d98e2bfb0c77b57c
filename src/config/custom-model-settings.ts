import type { MicroUsd } from '../domain/money.js';
import { isPlainObject } from '../lib/plain-object.js';
import { parseDateOnly } from '../lib/time.js';
import { OPTIONS } from './options.js';
import { readUpstreamBinding } from './provider-settings.js';
import type { UpstreamBinding } from './provider-settings.js';
import { ConfigError, readUsd } from './readers.js';
import { readChain } from './routing-settings.js';
import type { EngineChainSpec } from './routing-settings.js';

/**
 * The config file's `models`: models an operator declares, which this server offers like its own
 * (routes, validation, prices, OpenAPI, listings) and remote workers run (docs/config.md, "Custom
 * models"). Read here for their shape; src/models/custom-models.ts builds them into model modules
 * and judges what needs the catalog: kind, clashes, the request schema, price fields.
 */

/** A custom model's price rule, its one rate in micro-USD (the config's `prices` may replace it by the rule's name). */
export type CustomPriceDecl =
  | { readonly rule: 'fixed'; readonly rate: MicroUsd }
  | { readonly rule: 'per_second'; readonly rate: MicroUsd; readonly field: string }
  | { readonly rule: 'per_megapixel'; readonly rate: MicroUsd; readonly widthField: string; readonly heightField: string }
  | { readonly rule: 'per_output'; readonly rate: MicroUsd; readonly countField?: string };

export type PriceRuleName = CustomPriceDecl['rule'];

export interface CustomModelDecl {
  /** How messages name it: `models[2] (image/acme/portrait-v2)`. */
  readonly where: string;
  readonly path: string;
  readonly kind: string;
  readonly summary?: string;
  /** The request body's JSON Schema as written (src/models/custom-schema.ts checks and completes it). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly price: CustomPriceDecl;
  /** The media types its main output may have; absent: any of its kind. */
  readonly outputTypes?: readonly string[];
  /**
   * Its binding, read as a `model_engines` value is (docs/routing.md): one engine id (`remote:<pool>`,
   * `provider:<name>`: a chain of one), a fallback chain, or a chain with `spill_after_ms`
   * (src/engines/bindings.ts judges it).
   */
  readonly engine: EngineChainSpec;
  /** How it maps onto its provider, when bound to one (docs/providers.md). */
  readonly upstream?: UpstreamBinding;
  readonly deprecation?: { readonly sunsetDate: string; readonly replacement?: string; readonly migrationUrl?: string };
  readonly timeoutMs?: number;
  readonly zeroDataRetention: boolean;
}

/** `<kind>/<vendor>/<name>[/<variant>]`, each segment lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
const PATH_RE = /^[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*){2,3}$/;
const PATH_MAX = 200;
const SUMMARY_MAX = 200;

const KEYS = ['path', 'kind', 'summary', 'request', 'price', 'output', 'engine', 'upstream', 'deprecation', 'timeout_ms', 'zero_data_retention'];

/** Each rule: the rate's key (also the rate's name) and the field keys it takes, required or not. */
const PRICE_RULES: Readonly<Record<PriceRuleName, { readonly fields: readonly string[]; readonly optional: readonly string[] }>> = {
  fixed: { fields: [], optional: [] },
  per_second: { fields: ['field'], optional: [] },
  per_megapixel: { fields: ['width_field', 'height_field'], optional: [] },
  per_output: { fields: [], optional: ['count_field'] },
};

const TIMEOUT = OPTIONS.find((o) => o.key === 'job_timeout_ms')!;

function unknownKeys(o: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const extra = Object.keys(o).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are ${allowed.join(', ')}`);
}

function text(o: Record<string, unknown>, key: string, where: string, max: number): string {
  const v = o[key];
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) throw new ConfigError(`${where}.${key} must be a non-empty string of at most ${max} characters`);
  return v;
}

function readPrice(raw: unknown, where: string): CustomPriceDecl {
  const rules = Object.keys(PRICE_RULES) as PriceRuleName[];
  const shapes = 'one of {"fixed": "0.01"}, {"per_second": "0.002", "field": "duration"}, {"per_megapixel": "0.001", "width_field": "width", "height_field": "height"}, {"per_output": "0.005", "count_field": "num_outputs"}';
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be ${shapes}`);
  const given = rules.filter((r) => r in raw);
  if (given.length !== 1) throw new ConfigError(`${where} must name exactly one rate (${rules.join(', ')}): ${shapes}`);
  const rule = given[0]!;
  const { fields, optional } = PRICE_RULES[rule];
  unknownKeys(raw, [rule, ...fields, ...optional], where);
  const rate = readUsd(raw[rule], `${where}.${rule}`);
  const field = (key: string): string => {
    const v = raw[key];
    if (typeof v !== 'string' || v === '') throw new ConfigError(`${where}.${key} must name a property of the request schema`);
    return v;
  };
  switch (rule) {
    case 'fixed':
      return { rule, rate };
    case 'per_second':
      return { rule, rate, field: field('field') };
    case 'per_megapixel':
      return { rule, rate, widthField: field('width_field'), heightField: field('height_field') };
    case 'per_output':
      return raw.count_field === undefined ? { rule, rate } : { rule, rate, countField: field('count_field') };
  }
}

function readOutput(raw: unknown, where: string): readonly string[] {
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"content_types": ["image/png"]}`);
  unknownKeys(raw, ['content_types'], where);
  const types = raw.content_types;
  if (!Array.isArray(types) || types.length === 0 || !types.every((t) => typeof t === 'string' && t !== '')) {
    throw new ConfigError(`${where}.content_types must be a non-empty array of media types such as "image/png"`);
  }
  return Object.freeze([...new Set(types as string[])]);
}

function readDeprecation(raw: unknown, where: string): NonNullable<CustomModelDecl['deprecation']> {
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"sunset_date": "2027-01-01"}`);
  unknownKeys(raw, ['sunset_date', 'replacement', 'migration_url'], where);
  if (typeof raw.sunset_date !== 'string' || parseDateOnly(raw.sunset_date) === undefined) {
    throw new ConfigError(`${where}.sunset_date must be a date such as 2027-01-01`);
  }
  if (raw.replacement !== undefined && (typeof raw.replacement !== 'string' || raw.replacement === '')) throw new ConfigError(`${where}.replacement must be a model path`);
  if (raw.migration_url !== undefined && !isHttpUrl(raw.migration_url)) throw new ConfigError(`${where}.migration_url must be an absolute http(s) URL`);
  return {
    sunsetDate: raw.sunset_date,
    ...(raw.replacement !== undefined ? { replacement: raw.replacement as string } : {}),
    ...(raw.migration_url !== undefined ? { migrationUrl: raw.migration_url as string } : {}),
  };
}

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function readModel(raw: unknown, i: number, file: string): CustomModelDecl {
  let where = `${file}: models[${i}]`;
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object with path, kind, request, price and engine`);
  const path = raw.path;
  if (typeof path !== 'string' || path.length > PATH_MAX || !PATH_RE.test(path)) {
    throw new ConfigError(
      `${where}.path must be <kind>/<vendor>/<name>[/<variant>], each segment lowercase letters, digits, '.', '_' and '-', e.g. image/acme/gradient-v1; got ${JSON.stringify(path)}`,
    );
  }
  const label = `models[${i}] (${path})`;
  where = `${file}: ${label}`;
  unknownKeys(raw, KEYS, where);
  for (const key of ['kind', 'request', 'price', 'engine']) if (raw[key] === undefined) throw new ConfigError(`${where}: missing '${key}'`);
  const kind = text(raw, 'kind', where, 20);
  if (!isPlainObject(raw.request)) throw new ConfigError(`${where}.request must be a JSON Schema object with "type": "object"`);
  const engine = readChain(raw.engine, `${where}.engine`);
  if (raw.zero_data_retention !== undefined && typeof raw.zero_data_retention !== 'boolean') throw new ConfigError(`${where}.zero_data_retention must be true or false`);
  let timeoutMs: number | undefined;
  if (raw.timeout_ms !== undefined) {
    const ms = raw.timeout_ms;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < TIMEOUT.min || ms > TIMEOUT.max) {
      throw new ConfigError(`${where}.timeout_ms must be an integer from ${TIMEOUT.min} to ${TIMEOUT.max}, got ${JSON.stringify(ms)}`);
    }
    timeoutMs = ms;
  }
  return Object.freeze({
    where: label,
    path,
    kind,
    ...(raw.summary !== undefined ? { summary: text(raw, 'summary', where, SUMMARY_MAX) } : {}),
    request: structuredClone(raw.request),
    price: Object.freeze(readPrice(raw.price, `${where}.price`)),
    ...(raw.output !== undefined ? { outputTypes: readOutput(raw.output, `${where}.output`) } : {}),
    engine,
    ...(raw.upstream !== undefined ? { upstream: readUpstreamBinding(raw.upstream, `${where}.upstream`) } : {}),
    ...(raw.deprecation !== undefined ? { deprecation: Object.freeze(readDeprecation(raw.deprecation, `${where}.deprecation`)) } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    zeroDataRetention: raw.zero_data_retention === true,
  });
}

/** The `models` array, each entry's shape checked; what needs the catalog is checked when the catalog is built. */
export function readCustomModels(raw: unknown, file: string): CustomModelDecl[] {
  if (!Array.isArray(raw)) throw new ConfigError(`${file}: models must be an array of model declarations`);
  return raw.map((m, i) => readModel(m, i, file));
}
