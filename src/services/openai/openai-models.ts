import { DomainError } from '../../domain/error-catalogue.js';
import type { Clock } from '../../lib/clock.js';
import { isAvailable } from '../../models/catalog.js';
import type { Catalog, CatalogEntry } from '../../models/catalog.js';
import type { OutputKind } from '../../models/model.js';
import { ConfigError } from '../../config/readers.js';
import type { OpenAiSettings } from '../../config/openai-settings.js';
import { aspectField, paramError, resolutionField } from './openai-fields.js';

/** A model as OpenAI's GET /v1/models lists it. */
export interface OpenAiModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: string;
}

export interface OpenAiModelList {
  readonly object: 'list';
  readonly data: OpenAiModel[];
}

/**
 * The 404 OpenAI answers for a model it does not have; a retired or sunset id is one too (the
 * /v1 door has no 410: OpenAI's clients know only this). `code` rides in the fields beside `param`.
 */
export function modelNotFound(id: string): DomainError {
  return new DomainError('not_found', `The model '${id.slice(0, 200)}' does not exist or is no longer available`, { fields: { param: 'model', code: 'model_not_found' } });
}

/**
 * OpenAI's model names onto the catalog: a catalog path (`image/vendor-a/model-a-2/medium`) or an
 * alias of the config's `openai.models`; a request without one takes the configured default of its
 * kind, else the catalog's first model of that kind that needs nothing but a prompt.
 */
export class OpenAiModels {
  readonly #catalog: Catalog;
  readonly #clock: Clock;
  readonly #settings: OpenAiSettings;
  /** The catalog is fixed for the life of the process: its models are listed as created when it started. */
  readonly #created: number;

  /** Throws ConfigError at startup for an alias or default naming no model of the catalog. */
  constructor(catalog: Catalog, clock: Clock, settings: OpenAiSettings) {
    this.#catalog = catalog;
    this.#clock = clock;
    this.#settings = settings;
    this.#created = Math.floor(clock.nowMs() / 1000);
    for (const [alias, path] of Object.entries(settings.models)) {
      const entry = catalog.get(path);
      if (!entry || entry.route) throw new ConfigError(`openai.models.${alias}: '${path.slice(0, 200)}' is not a model of this server`);
      if (catalog.get(alias)) throw new ConfigError(`openai.models: '${alias.slice(0, 200)}' is already a model path; an alias cannot hide a model`);
    }
    for (const [key, value, kind] of [['default_image_model', settings.defaultImageModel, 'image'], ['default_video_model', settings.defaultVideoModel, 'video']] as const) {
      if (value === undefined) continue;
      const entry = catalog.get(settings.models[value] ?? value);
      if (!entry || entry.route) throw new ConfigError(`openai.${key}: '${value.slice(0, 200)}' is neither a model of this server nor an alias of openai.models`);
      if (entry.kind !== kind) throw new ConfigError(`openai.${key}: '${value.slice(0, 200)}' makes ${entry.kind}, not ${kind}`);
    }
  }

  /** How long the synchronous images answer waits for its jobs. */
  get waitSeconds(): number {
    return this.#settings.waitSeconds;
  }

  #usable(entry: CatalogEntry | undefined): entry is CatalogEntry {
    return entry !== undefined && !entry.route && isAvailable(entry, this.#clock.nowMs());
  }

  /**
   * The catalog model `id` names (a path or an alias), for a request of `kind`: an unknown,
   * retired or sunset id is model_not_found (404); a model of another kind is a 400 naming `model`.
   */
  resolve(id: string | null | undefined, kind: OutputKind): CatalogEntry {
    if (id === undefined || id === null || id === '') return this.#default(kind);
    const entry = this.#catalog.get(Object.hasOwn(this.#settings.models, id) ? this.#settings.models[id]! : id);
    if (!this.#usable(entry)) throw modelNotFound(id);
    if (entry.kind !== kind) throw paramError('model', `'${id.slice(0, 200)}' makes ${entry.kind}, not ${kind === 'image' ? 'images' : kind}; choose a ${kind} model (GET /v1/models)`);
    return entry;
  }

  /** The model id a request of `kind` names: `id` as sent, else the configured default (a path or an alias); undefined when neither. */
  namedId(id: string | null | undefined, kind: OutputKind): string | undefined {
    if (id !== undefined && id !== null && id !== '') return id;
    return kind === 'image' ? this.#settings.defaultImageModel : kind === 'video' ? this.#settings.defaultVideoModel : undefined;
  }

  #default(kind: OutputKind): CatalogEntry {
    const configured = this.namedId(undefined, kind);
    if (configured !== undefined) return this.resolve(configured, kind);
    const entry = this.#catalog.entries.find((e) => e.kind === kind && this.#usable(e) && needsOnlyAPrompt(e));
    if (!entry) throw paramError('model', `this server has no ${kind} model that takes a prompt alone; name one in model (GET /v1/models)`);
    return entry;
  }

  /** GET /v1/models: every model taking requests now, then the aliases whose model does. */
  list(): OpenAiModelList {
    const data: OpenAiModel[] = this.#catalog.entries.filter((e) => this.#usable(e)).map((e) => this.#view(e.path, e));
    for (const [alias, path] of Object.entries(this.#settings.models)) {
      const entry = this.#catalog.get(path);
      if (this.#usable(entry)) data.push(this.#view(alias, entry));
    }
    return { object: 'list', data };
  }

  /** GET /v1/models/{id}: a path or an alias; retired, sunset and unknown ids are model_not_found. */
  get(id: string): OpenAiModel {
    const entry = this.#catalog.get(Object.hasOwn(this.#settings.models, id) ? this.#settings.models[id]! : id);
    if (!this.#usable(entry)) throw modelNotFound(id);
    return this.#view(id, entry);
  }

  #view(id: string, entry: CatalogEntry): OpenAiModel {
    return { id, object: 'model', created: this.#created, owned_by: ownerOf(entry.path) };
  }
}

/** The vendor segment of a path (`image/vendor-a/...` -> `vendor-a`); a model without one is this server's own. */
function ownerOf(path: string): string {
  const parts = path.split('/');
  return parts.length >= 3 ? parts[1]! : 'mediagen';
}

/** Whether the model runs from a prompt, with the size fields the mapping rule fills. */
function needsOnlyAPrompt(entry: CatalogEntry): boolean {
  const props = entry.request?.properties ?? {};
  if (!props.prompt) return false;
  const filled = new Set(['prompt', aspectField(entry)?.name, resolutionField(entry)?.name]);
  return (entry.request?.required ?? []).every((f) => filled.has(f));
}
