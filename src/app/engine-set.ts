import type { Config } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import type { EngineBindings } from '../engines/bindings.js';
import { buildBindings, linkBindings } from '../engines/bindings.js';
import type { BindableEngine } from '../engines/engine.js';
import type { EngineBuildOptions, EngineKind, KindWiring } from '../engines/engine-kind.js';
import { ENGINE_KINDS, kindOf } from '../engines/kinds.js';
import { mostSpecific, namedBindings } from '../engines/named-bindings.js';
import type { NamedBinding } from '../engines/named-bindings.js';
import type { ProviderMeter } from '../engines/providers/provider-engine.js';
import { UpstreamNudges } from '../engines/providers/upstream-nudges.js';
import type { EngineRouter } from '../engines/router.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { buildCatalog } from '../models/catalog.js';
import type { Catalog } from '../models/catalog.js';
import { modelsWith } from '../models/custom-models.js';
import { mediaLimits } from './settings.js';

export interface EngineSetOptions {
  readonly clock: Clock;
  readonly nudges: UpstreamNudges;
  readonly meter?: ProviderMeter;
  readonly log?: Log;
}

/** The engines of one process behind the router that hands each job to its model's. */
export interface EngineSet {
  readonly router: EngineRouter;
  readonly engines: readonly BindableEngine[];
  /** Closes every engine that keeps something running (a command engine's processes, a provider's connections), each once. */
  close(): Promise<void>;
}

/** What a config's models are bound to, checked: the catalog, the bindings, and each model bound to a named engine. */
export interface ModelWiring {
  readonly catalog: Catalog;
  readonly bindings: EngineBindings;
  /** Every model bound to a named engine (an instance of a kind with a config section) with its `upstream` block. */
  readonly named: ReadonlyMap<string, NamedBinding>;
  /** The kinds the bindings were checked against (kinds.ts; a test may add one): the engine set builds these. */
  readonly kinds: readonly EngineKind[];
  /** The later places of chains (docs/routing.md), each wired as the first is: `[1]` binds each model to its chain's second engine, and so on. */
  readonly links?: readonly ModelWiring[];
}

/** One kind's view of the wiring: the models bound to its engines. */
export function kindWiring(config: Config, wiring: ModelWiring, kind: EngineKind): KindWiring {
  const bound = new Map([...wiring.named].filter(([, b]) => kindOf(b.engine, wiring.kinds) === kind));
  return { config, catalog: wiring.catalog, bindings: wiring.bindings, bound };
}

/**
 * The catalog and bindings a config makes, checked in every role (an API-only process too): each
 * model bound to an engine of a named kind is bound to an instance its section declares, then each
 * kind checks its own bindings (a provider's mapping, a ComfyUI workflow). Throws a ConfigError
 * naming the model. Whether an engine id without a kind (`local`, a typo) has an engine is the
 * engine router's check, in the processes that run jobs.
 */
export function wireModels(config: Config, kinds: readonly EngineKind[] = ENGINE_KINDS): ModelWiring {
  const catalog = buildCatalog({ deprecations: config.deprecations, models: modelsWith(config.models) });
  const bindings = buildBindings(catalog.entries, config.modelEngines, config.engineChains);
  const customUpstreams = new Map(config.models.flatMap((m) => (m.upstream ? [[m.path, m.upstream] as const] : [])));
  const named = namedBindings(catalog.entries, bindings, (engine) => kindOf(engine, kinds)?.section !== undefined, config.upstreams, customUpstreams);
  const wiring: ModelWiring = { catalog, bindings, named, kinds, links: laterLinks(config, catalog, bindings, kinds, customUpstreams) };
  for (const w of [wiring, ...(wiring.links ?? [])]) checkWiring(config, w);
  return wiring;
}

/** The wiring of each later place of the chains: the models whose chain reaches it, each with its `upstream` block (its own, else the top-level one). */
function laterLinks(config: Config, catalog: Catalog, bindings: EngineBindings, kinds: readonly EngineKind[], customUpstreams: ReadonlyMap<string, NamedBinding['upstream'] & object>): ModelWiring[] {
  const longest = Math.max(1, ...catalog.entries.map((m) => bindings.chain(m.path)?.engines.length ?? 1));
  return Array.from({ length: longest - 1 }, (_, i) => {
    const linked = linkBindings(bindings, i + 1);
    const named = new Map<string, NamedBinding>();
    for (const m of catalog.entries) {
      const b = m.engine === undefined ? undefined : linked.of(m.path);
      if (b?.kind !== 'engine' || kindOf(b.engine, kinds)?.section === undefined) continue;
      named.set(m.path, { engine: b.engine, upstream: m.custom ? customUpstreams.get(m.path) : mostSpecific(m.path, config.upstreams) });
    }
    return { catalog, bindings: linked, named, kinds };
  });
}

/** One place's bindings checked: each engine names a kind, each named engine is declared, and each kind checks its own models. */
function checkWiring(config: Config, wiring: ModelWiring): void {
  const { catalog, bindings, named, kinds } = wiring;
  for (const m of catalog.entries) {
    const b = m.engine === undefined ? undefined : bindings.of(m.path);
    if (b?.kind !== 'engine' || !b.engine.includes(':') || kindOf(b.engine, kinds)) continue;
    const origin = bindings.origin(m.path);
    const known = kinds.map((k) => (k.section ? `${k.name}:<name>` : k.name)).join(', ');
    throw new ConfigError(`model ${m.path} is bound to ${b.engine}${origin ? ` (${origin})` : ''}, which names no kind of engine this server has; engines are ${known}, or remote:<pool>`);
  }
  for (const [path, { engine }] of named) {
    const { section } = kindOf(engine, kinds)!;
    const declared = section!.names(config);
    if (!declared.some((name) => engine === `${kindOf(engine, kinds)!.name}:${name}`)) {
      const origin = bindings.origin(path);
      throw new ConfigError(`model ${path} is bound to ${engine}${origin ? ` (${origin})` : ''}, which ${section!.key} does not declare; ${section!.key}: ${declared.join(', ') || 'none'}`);
    }
  }
  for (const kind of kinds) kind.check?.(kindWiring(config, wiring, kind));
}

/** How long the engines' start-up checks may take together: a check never holds the start for long. */
const CHECK_BUDGET_MS = 10_000;

/**
 * The one place a process's engines are built, for `serve`'s workers and `mediagen remote-worker`
 * alike: every kind builds its engines (kinds.ts), each model's job goes to the engine its binding
 * names (its module's `engine`, or the config's `model_engines`: bindings.ts), and every engine's
 * start-up check runs once, its warnings logged (engine.ts, `check`).
 */
export async function buildEngineSet(config: Config, wiring: ModelWiring, opts: EngineSetOptions): Promise<EngineSet> {
  const { EngineRouter } = await import('../engines/router.js');
  const build: EngineBuildOptions = { clock: opts.clock, limits: mediaLimits(config), nudges: opts.nudges, ...(opts.meter ? { meter: opts.meter } : {}), ...(opts.log ? { log: opts.log } : {}) };
  const first = (await Promise.all(wiring.kinds.map((kind) => kind.build(kindWiring(config, wiring, kind), build)))).flat();
  // A later place of a chain builds only the kinds with models there (a provider engine per place
  // knows that place's models): the router takes, of engines of one name, the one that runs the model.
  const later = await Promise.all(
    (wiring.links ?? []).map(async (w) => (await Promise.all(w.kinds.filter((k) => k.section && [...w.named.values()].some((b) => kindOf(b.engine, w.kinds) === k)).map((k) => k.build(kindWiring(config, w, k), build)))).flat()),
  );
  const engines = [...first, ...later.flat()];
  const close = async (): Promise<void> => {
    const results = await Promise.allSettled(engines.map((e) => e.close?.()));
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected') opts.log?.warn({ engine: engines[i]!.name, err: { name: (r.reason as Error).name, message: (r.reason as Error).message } }, 'could not close an engine');
    }
  };
  let router: EngineRouter;
  try {
    router = EngineRouter.build(wiring.catalog.entries, engines, wiring.bindings, { clock: opts.clock, limits: config.engineLimits, circuit: config.circuit, ...(opts.log ? { log: opts.log } : {}) });
    logChains(wiring, opts.log);
    await checkEngines(engines, opts.log);
  } catch (err) {
    await close();
    throw err;
  }
  let closed: Promise<void> | undefined;
  return { router, engines, close: () => (closed ??= close()) };
}

/** The start-up log's one line per binding of several engines (docs/routing.md, "Visible routing"). */
function logChains(wiring: ModelWiring, log: Log | undefined): void {
  const seen = new Set<string>();
  for (const m of wiring.catalog.entries) {
    const chain = m.engine === undefined ? undefined : wiring.bindings.chain(m.path);
    if (!chain || chain.engines.length < 2) continue;
    // Named by the binding: its model_engines key (an exact path or a pattern), else the custom model's own path.
    const origin = wiring.bindings.origin(m.path);
    const key = origin === undefined ? m.path : origin === 'model_engines' ? `model_engines '${m.path}'` : origin;
    if (seen.has(key)) continue;
    seen.add(key);
    log?.info({ binding: key, engines: chain.engines, ...(chain.spillAfterMs === undefined ? {} : { spillAfterMs: chain.spillAfterMs }) }, `routing: ${key} -> ${chain.engines.join(' -> ')}`);
  }
}

/** Runs every engine's start-up check at once, within CHECK_BUDGET_MS; a warning is logged, a refusal (ConfigError) stops the start. */
async function checkEngines(engines: readonly BindableEngine[], log: Log | undefined): Promise<void> {
  const signal = AbortSignal.timeout(CHECK_BUDGET_MS);
  const results = await Promise.allSettled(engines.map((e) => e.check?.(signal)));
  for (const [i, r] of results.entries()) {
    const engine = engines[i]!.name;
    if (r.status === 'fulfilled') {
      if (r.value !== undefined) log?.warn({ engine }, r.value);
    } else if (r.reason instanceof ConfigError) {
      throw r.reason;
    } else {
      // A check that failed of itself says nothing of the engine: its jobs will tell.
      log?.warn({ engine, err: { name: (r.reason as Error).name, message: (r.reason as Error).message } }, 'engine start-up check failed');
    }
  }
}

export { UpstreamNudges };
