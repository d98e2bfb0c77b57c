import type { Config } from '../config/config.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import type { Catalog } from '../models/catalog.js';
import type { EngineBindings } from './bindings.js';
import type { BindableEngine, UpstreamDescription } from './engine.js';
import type { MediaLimits } from './media/media-limits.js';
import type { NamedBinding } from './named-bindings.js';
import type { ProviderMeter } from './providers/provider-engine.js';
import type { UpstreamNudges } from './providers/upstream-nudges.js';

/**
 * An engine kind as the rest of the server knows it (docs/architecture.md, "Engine kinds"): each
 * engine folder exports one, and kinds.ts lists them, once. Everything outside the folder that
 * depends on the kind (how a binding names its engines, which config section declares them, the
 * start-up check of its bindings, building its engines, reading its stored state for a job's
 * details) asks the descriptor; adding a kind is its folder and a line in kinds.ts.
 *
 * A descriptor is light: it imports its engine's code only when `build` runs, so a process that
 * only reads the catalog or a job's details (`mediagen admin`, an API-only server) never loads it.
 */
export interface EngineKind {
  /**
   * The kind's name. An engine of a kind with a `section` is bound as `<name>:<instance>`
   * (`comfyui:gpu`, `provider:replicate`); a kind without one has one engine, bound as `<name>` (`local`).
   */
  readonly name: string;
  /** The config file's section declaring the kind's engines (`comfyui`), each by its `name`; a model bound to one may carry an `upstream` block. */
  readonly section?: {
    readonly key: string;
    /** The instance names the section declares. */
    names(config: Config): readonly string[];
  };
  /**
   * Checks the models bound to engines of this kind (`wiring.bound`), at start in every process,
   * an API-only one too, as every other binding is: throws a ConfigError naming the model. That
   * each is bound to an instance its section declares is checked before, for every kind.
   */
  check?(wiring: KindWiring): void;
  /** The engines of this kind, each with the models bound to it; engines no model is bound to may be left out. */
  build(wiring: KindWiring, opts: EngineBuildOptions): Promise<readonly BindableEngine[]>;
  /**
   * What a job's details show of the state this kind's engines store with a job
   * (`UpstreamState.state`, their own JSON). Absent: the kind stores no status of its own.
   */
  describe?(state: Readonly<Record<string, unknown>>): UpstreamDescription;
}

/** A config's models as one kind sees them: the catalog and bindings, and the models bound to engines of this kind. */
export interface KindWiring {
  readonly config: Config;
  readonly catalog: Catalog;
  readonly bindings: EngineBindings;
  /** Each model bound to an engine of this kind, with its `upstream` block: model path -> binding. */
  readonly bound: ReadonlyMap<string, NamedBinding>;
}

/** What a process gives every kind's engines. */
export interface EngineBuildOptions {
  readonly clock: Clock;
  /** The `input_max_*` and `input_decode_*` settings. */
  readonly limits: MediaLimits;
  /** Verified provider webhooks wake the runs waiting on that provider's job. */
  readonly nudges: UpstreamNudges;
  readonly meter?: ProviderMeter;
  readonly log?: Log;
}

/** The kind an engine id or binding names: `comfyui` of `comfyui:gpu`, `local` of `local`. */
export function kindNameOf(engine: string): string {
  const colon = engine.indexOf(':');
  return colon < 0 ? engine : engine.slice(0, colon);
}
