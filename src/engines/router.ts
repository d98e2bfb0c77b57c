import { ConfigError } from '../config/config.js';
import { DEFAULT_CIRCUIT } from '../config/routing-settings.js';
import type { CircuitSettings, EngineLimit } from '../config/routing-settings.js';
import { systemClock } from '../lib/clock.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import type { ModelModule } from '../models/model.js';
import { buildBindings } from './bindings.js';
import type { EngineBindings } from './bindings.js';
import { Circuit, notAccepted, upstreamCause } from './circuit.js';
import type { CircuitState } from './circuit.js';
import { EngineError, RunStopped } from './engine.js';
import type { BindableEngine, Engine, EngineContext, EngineJob, OutputFile, RouteStep, UpstreamState } from './engine.js';

/** One place of a model's chain: an engine of this process, or a remote pool (only ever first). */
interface Link {
  readonly id: string;
  readonly engine: Engine | undefined;
}

interface Chain {
  readonly links: readonly Link[];
  readonly spillAfterMs: number | undefined;
  /** Whether a run records its route: a chain of several engines, or an engine with a limit. */
  readonly recorded: boolean;
}

/** Models whose every engine here is limited, and the places left on those engines now. */
export interface LimitedGroup {
  readonly models: readonly string[];
  readonly room: number;
}

export interface RouterOptions {
  readonly clock?: Clock;
  readonly log?: Log;
  readonly limits?: Readonly<Record<string, EngineLimit>>;
  readonly circuit?: CircuitSettings;
}

/** How often a job waiting for a place on a full engine, or for an open circuit, looks again. */
const WAIT_STEP_MS = 250;

/**
 * The one Engine the worker is given: it hands each job to the engines its model's chain names
 * (bindings.ts; docs/routing.md), in order. The next engine takes the job only when the one
 * before provably did not accept it: its circuit is open, or the engine said so (an EngineError
 * `notAccepted`: only the engine knows what its upstream may hold). Once an engine stored an
 * upstream id, the job is its: never sent elsewhere, and a later run resumes it there. A fallback
 * is part of one run, so it spends none of the job's attempts. An engine with `max_in_flight` holds a store-backed place
 * for each job it runs; a job finding none waits, or after `spill_after_ms` goes to the next
 * engine. Every binding is checked when the router is built, so a server with a model no engine
 * can run refuses to start, naming the model.
 */
export class EngineRouter implements Engine {
  readonly name = 'router';
  readonly #chains: ReadonlyMap<string, Chain>;
  readonly #circuits: ReadonlyMap<string, Circuit>;
  readonly #limits: Readonly<Record<string, EngineLimit>>;
  readonly #clock: Clock;
  /** Jobs this process claimed and has not yet handed to an engine: model -> job ids (see claimed). */
  readonly #unplaced = new Map<string, Set<string>>();

  private constructor(chains: ReadonlyMap<string, Chain>, circuits: ReadonlyMap<string, Circuit>, limits: Readonly<Record<string, EngineLimit>>, clock: Clock) {
    this.#chains = chains;
    this.#circuits = circuits;
    this.#limits = limits;
    this.#clock = clock;
  }

  /**
   * Binds every model that takes requests (retired ones only answer 410) to its chain's engines,
   * as `bindings` says; a remote pool has no engine here. Throws a ConfigError naming the model
   * when an engine is missing or cannot run it. `engines` may hold several engines of one name
   * (each place of chains is wired on its own): the one that can run the model is taken.
   */
  static build(
    models: readonly Pick<ModelModule, 'path' | 'engine' | 'custom'>[],
    engines: readonly BindableEngine[],
    bindings: EngineBindings = buildBindings(models),
    opts: RouterOptions = {},
  ): EngineRouter {
    const clock = opts.clock ?? systemClock;
    const limits = opts.limits ?? {};
    const names = [...new Set(engines.map((e) => e.name))];
    const chains = new Map<string, Chain>();
    for (const m of models) {
      const chain = m.engine === undefined ? undefined : bindings.chain(m.path);
      if (!chain) continue;
      const origin = bindings.origin(m.path);
      const from = origin ? ` (${origin})` : '';
      const links = chain.engines.map((id, i): Link => {
        if (i === 0 && bindings.of(m.path)?.kind === 'remote') return { id, engine: undefined };
        const named = engines.filter((e) => e.name === id);
        if (named.length === 0) throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which this server does not have; engines: ${names.join(', ') || 'none'}`);
        const engine = named.find((e) => e.canRun(m.path));
        if (!engine) throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which cannot run it`);
        return { id, engine };
      });
      // A model bound to a remote pool alone runs nowhere here.
      if (links.every((l) => l.engine === undefined)) continue;
      chains.set(m.path, { links, spillAfterMs: chain.spillAfterMs, recorded: links.length > 1 || links.some((l) => limits[l.id] !== undefined) });
    }
    for (const id of Object.keys(limits)) {
      if (!names.includes(id)) throw new ConfigError(`engine_limits.${id}: this server has no such engine; engines: ${names.join(', ') || 'none'}`);
    }
    const settings = opts.circuit ?? DEFAULT_CIRCUIT;
    const circuits = new Map(names.map((id) => [id, new Circuit(id, settings, clock, opts.log)]));
    return new EngineRouter(chains, circuits, limits, clock);
  }

  /** The first engine of this process a model's jobs go to, if it takes requests and runs here. */
  engineFor(model: string): Engine | undefined {
    return this.#chains.get(model)?.links.find((l) => l.engine)?.engine;
  }

  /** Whether any engine has a max_in_flight: only then can a model be `full`. */
  get limited(): boolean {
    return Object.keys(this.#limits).length > 0;
  }

  /**
   * The models whose every engine here has a max_in_flight, grouped by those engines, with the
   * places left on them by `inUse` (places held per engine, across the cluster): a worker claims no
   * more of a group's jobs than it has room, so none holds a worker slot only to wait (docs/routing.md).
   */
  limitedGroups(inUse: ReadonlyMap<string, number>): LimitedGroup[] {
    const groups = new Map<string, { models: string[]; room: number }>();
    for (const [model, chain] of this.#chains) {
      // A remote pool's chain is claimed here only to spill, by its own claim.
      if (!chain.links[0]!.engine) continue;
      const here = chain.links.filter((l) => l.engine).map((l) => l.id);
      if (!here.every((id) => this.#limits[id])) continue;
      const key = [...here].sort().join(' ');
      const group = groups.get(key) ?? groups.set(key, { models: [], room: here.reduce((n, id) => n + Math.max(0, this.#limits[id]!.maxInFlight - (inUse.get(id) ?? 0)), 0) }).get(key)!;
      group.models.push(model);
      group.room -= this.#unplaced.get(model)?.size ?? 0;
    }
    return [...groups.values()].map((g) => ({ models: g.models, room: Math.max(0, g.room) }));
  }

  /** Each engine's circuit, by id: what /readyz and /metrics show. */
  states(): ReadonlyMap<string, CircuitState> {
    return new Map([...this.#circuits].map(([id, c]) => [id, c.state]));
  }

  /**
   * A job of `model` this process has claimed: it counts against its group's room (limitedGroups)
   * from the claim until it is handed to an engine (holding its place, where there is a limit) or
   * the returned release is called as its run ends. Counted from the claim, not from the start of
   * the run: between the two, the worker's next claim would otherwise see the place still free and
   * take a second job that could only wait in its slot for it.
   */
  claimed(jobId: string, model: string): () => void {
    const ids = this.#unplaced.get(model) ?? this.#unplaced.set(model, new Set()).get(model)!;
    ids.add(jobId);
    return () => this.#handedOver(jobId, model);
  }

  #handedOver(jobId: string, model: string): void {
    const ids = this.#unplaced.get(model);
    if (ids?.delete(jobId) && ids.size === 0) this.#unplaced.delete(model);
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    // Counted already when the worker claimed it; a node app's step is counted from here.
    const handedOver = this.claimed(job.id, job.model);
    try {
      return await this.#route(job, ctx, handedOver);
    } finally {
      handedOver();
    }
  }

  async #route(job: EngineJob, ctx: EngineContext, handedOver: () => void): Promise<OutputFile[]> {
    // A job stored by a server with other models (a removed one, an older release), or of a model
    // bound to remote workers, has no engine here.
    const chain = this.#chains.get(job.model);
    if (!chain) throw new EngineError('engine_failed', `no engine on this server runs ${job.model}`);
    const route = chain.recorded ? ctx.route : undefined;
    const trail: RouteStep[] = [];
    const step = (engine: string, outcome: RouteStep['outcome'], reason?: string) => trail.push({ engine, outcome, ...(reason ? { reason } : {}), at: new Date(this.#clock.nowMs()).toISOString() });
    // Upstream work stored by an earlier run is its engine's: the job goes back there, nowhere else.
    let previous: Promise<UpstreamState | undefined> | undefined;
    const load = () => (previous ??= ctx.upstream.load());
    const held = chain.links.length > 1 ? await load() : undefined;
    const owner = held && chain.links.find((l) => l.engine && l.id === held.engine);
    const links = owner ? [owner] : chain.links;
    for (const [i, link] of links.entries()) {
      const last = i === links.length - 1;
      if (!link.engine) {
        step(link.id, 'spilled');
        continue;
      }
      const circuit = this.#circuits.get(link.id)!;
      if (!(await this.#admit(circuit, last, ctx.signal))) {
        step(link.id, 'skipped', 'its circuit is open');
        continue;
      }
      const limit = this.#limits[link.id];
      if (limit && route && !(await this.#place(link.id, limit.maxInFlight, last ? undefined : chain.spillAfterMs, route, ctx.signal))) {
        circuit.abandon();
        step(link.id, 'busy', `at its max_in_flight of ${limit.maxInFlight}`);
        continue;
      }
      // An engine with a next one after it says at once when it cannot take the job (EngineContext.canFallBack).
      const linkCtx: EngineContext = { ...ctx, upstream: { ...ctx.upstream, load }, canFallBack: !last };
      // Recorded at the hand-over, so the job's details and the queue metrics name the engine it runs on while it runs.
      step(link.id, 'ran');
      handedOver();
      try {
        await route?.record(trail, link.id);
        const out = await link.engine.run(job, linkCtx);
        circuit.report(undefined);
        return out;
      } catch (err) {
        if (ctx.signal.aborted || err instanceof RunStopped) {
          circuit.abandon();
          throw err;
        }
        circuit.report(err);
        if (!last && notAccepted(err)) {
          trail.pop();
          step(link.id, 'refused', (upstreamCause(err)?.message ?? (err as Error).message).slice(0, 200));
          await route?.record(trail, null);
          continue;
        }
        throw err;
      } finally {
        if (limit && route) await route.release();
      }
    }
    await route?.record(trail, null);
    throw new EngineError('upstream_unavailable', `no engine of ${job.model}'s chain took the job (${trail.map((s) => `${s.engine}: ${s.outcome}`).join(', ')}); you were not billed, submit it again later`);
  }

  /**
   * Whether the job may go to the engine behind `circuit`: at once when it is closed (or this job
   * is the half-open probe); when open, false if a next engine may take the job, else after waiting
   * for the cooldown: a job bound to it alone waits until its deadline (the run's signal) rather than fail.
   */
  async #admit(circuit: Circuit, last: boolean, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (circuit.allow()) return true;
      if (!last) return false;
      await this.#clock.sleep(Math.max(circuit.waitMs(), WAIT_STEP_MS), signal);
    }
  }

  /** Takes a place on a limited engine, waiting for one; false when the job has waited `spillAfterMs` (since its creation) and may go to the next engine. */
  async #place(engine: string, max: number, spillAfterMs: number | undefined, route: NonNullable<EngineContext['route']>, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (await route.acquire(engine, max)) return true;
      if (spillAfterMs !== undefined && this.#clock.nowMs() - route.waitingSinceMs >= spillAfterMs) return false;
      await this.#clock.sleep(WAIT_STEP_MS, signal);
    }
  }
}
