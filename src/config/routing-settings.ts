import { isPlainObject } from '../lib/plain-object.js';
import { ConfigError } from './readers.js';

/**
 * The routing sections of the config file (docs/routing.md): `model_engines` values that name a
 * chain of engines, `engine_limits` and `circuit`. A `model_engines` value is one engine id, a
 * list (a fallback chain, first engine first) or `{engines, spill_after_ms}` (a chain whose next
 * engine may take a job still waiting for the one before after `spill_after_ms`).
 */

/** One `model_engines` entry: its engines in order and, for spillover, how long a job waits for the first. */
export interface EngineChainSpec {
  readonly engines: readonly string[];
  readonly spillAfterMs?: number;
}

export interface EngineLimit {
  /** The most jobs this engine runs at once across every process sharing the store. */
  readonly maxInFlight: number;
}

/** `circuit`: after `failures` consecutive failures that say nothing about the job an engine's circuit opens for `cooldownMs`. */
export interface CircuitSettings {
  readonly failures: number;
  readonly cooldownMs: number;
}

export const DEFAULT_CIRCUIT: CircuitSettings = Object.freeze({ failures: 5, cooldownMs: 30_000 });

/** The longest chain: each link is a fallback an operator reasons about; more is a typo. */
const MAX_CHAIN = 8;
const SPILL_MAX_MS = 24 * 3_600_000;

const int = (raw: unknown, where: string, min: number, max: number): number => {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) throw new ConfigError(`${where} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return raw;
};

function engineId(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw === '' || raw.length > 140) throw new ConfigError(`${where} must be an engine id such as "local", "comfyui:gpu", "provider:fal" or a remote pool such as "remote:gpu"`);
  return raw;
}

/** One `model_engines` value, as written, read into a chain. */
export function readChain(raw: unknown, where: string): EngineChainSpec {
  if (typeof raw === 'string') return Object.freeze({ engines: Object.freeze([engineId(raw, where)]) });
  let list: unknown = raw;
  let spillAfterMs: number | undefined;
  if (isPlainObject(raw)) {
    const extra = Object.keys(raw).find((k) => k !== 'engines' && k !== 'spill_after_ms');
    if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are engines, spill_after_ms`);
    list = raw.engines;
    if (raw.spill_after_ms !== undefined) spillAfterMs = int(raw.spill_after_ms, `${where}.spill_after_ms`, 0, SPILL_MAX_MS);
  }
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_CHAIN) {
    throw new ConfigError(`${where} must be an engine id, a list of 1 to ${MAX_CHAIN} engine ids (a fallback chain, e.g. ["comfyui:gpu", "provider:fal"]) or {"engines": [...], "spill_after_ms": 20000}`);
  }
  const engines = list.map((id, i) => engineId(id, `${where}${isPlainObject(raw) ? '.engines' : ''}[${i}]`));
  const twice = engines.find((id, i) => engines.indexOf(id) !== i);
  if (twice !== undefined) throw new ConfigError(`${where} names ${twice} twice; a chain tries each engine once`);
  if (spillAfterMs !== undefined && engines.length < 2) throw new ConfigError(`${where}.spill_after_ms needs a second engine to spill to`);
  return Object.freeze({ engines: Object.freeze(engines), ...(spillAfterMs === undefined ? {} : { spillAfterMs }) });
}

/** `model_engines`: model path or pattern -> a chain (an engine id being a chain of one). */
export function readModelEngineChains(raw: unknown, file: string): Record<string, EngineChainSpec> {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: model_engines must be an object of model path or pattern to engine id (or a list of them)`);
  return Object.fromEntries(Object.entries(raw).map(([model, value]) => [model, readChain(value, `${file}: model_engines.${model}`)]));
}

/** The first engine of each chain: what a model is bound to when every engine has room and is up. */
export const firstEngines = (chains: Readonly<Record<string, EngineChainSpec>>): Record<string, string> =>
  Object.fromEntries(Object.entries(chains).map(([k, c]) => [k, c.engines[0]!]));

/** `engine_limits`: engine id -> {max_in_flight}. */
export function readEngineLimits(raw: unknown, file: string): Record<string, EngineLimit> {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: engine_limits must be an object of engine id to {"max_in_flight": N}`);
  return Object.fromEntries(
    Object.entries(raw).map(([engine, limit]) => {
      const where = `${file}: engine_limits.${engine}`;
      if (engine.startsWith('remote:')) throw new ConfigError(`${where}: a remote pool is limited by its workers' own concurrency, not here`);
      if (!isPlainObject(limit)) throw new ConfigError(`${where} must be {"max_in_flight": N}`);
      const extra = Object.keys(limit).find((k) => k !== 'max_in_flight');
      if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the key is max_in_flight`);
      return [engine, Object.freeze({ maxInFlight: int(limit.max_in_flight, `${where}.max_in_flight`, 1, 100_000) })];
    }),
  );
}

/** `circuit`: {failures, cooldown_ms}, each optional. */
export function readCircuit(raw: unknown, file: string): CircuitSettings {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: circuit must be an object such as {"failures": 5, "cooldown_ms": 30000}`);
  const extra = Object.keys(raw).find((k) => k !== 'failures' && k !== 'cooldown_ms');
  if (extra !== undefined) throw new ConfigError(`${file}: circuit: unknown key '${extra}'; the keys are failures, cooldown_ms`);
  return Object.freeze({
    failures: raw.failures === undefined ? DEFAULT_CIRCUIT.failures : int(raw.failures, `${file}: circuit.failures`, 1, 1000),
    cooldownMs: raw.cooldown_ms === undefined ? DEFAULT_CIRCUIT.cooldownMs : int(raw.cooldown_ms, `${file}: circuit.cooldown_ms`, 100, 3_600_000),
  });
}

/** What the routing sections add to the config. */
export interface RoutingConfig {
  /** `model_engines` as chains (a single engine id is a chain of one); `modelEngines` holds each chain's first engine. */
  readonly engineChains: Readonly<Record<string, EngineChainSpec>>;
  readonly engineLimits: Readonly<Record<string, EngineLimit>>;
  readonly circuit: CircuitSettings;
}

/** The routing sections as a config file writes them, read into what the config holds (`modelEngines`: each chain's first engine). */
export function readRoutingSections(raw: { model_engines?: unknown; engine_limits?: unknown; circuit?: unknown }, file: string): RoutingConfig & { modelEngines: Record<string, string> } {
  const engineChains = raw.model_engines === undefined ? {} : readModelEngineChains(raw.model_engines, file);
  return {
    modelEngines: firstEngines(engineChains),
    engineChains,
    engineLimits: raw.engine_limits === undefined ? {} : readEngineLimits(raw.engine_limits, file),
    circuit: raw.circuit === undefined ? DEFAULT_CIRCUIT : readCircuit(raw.circuit, file),
  };
}
