// Room services/catalog/: the models as data (GET /models, deprecations), what a model and a request body must be
// before anything is priced or stored (model-requests), and quotes.
// May import from services/: billing, identity, common; test/unit/layers.test.ts holds the order.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { notFound } from '../../domain/error-catalogue.js';
import type { Clock } from '../../lib/clock.js';
import { resolveUrl } from '../../lib/urls.js';
import { isAvailable } from '../../models/catalog.js';
import type { Catalog, CatalogEntry } from '../../models/catalog.js';
import type { Deprecation } from '../../models/deprecation.js';
import { OUTPUT_KINDS } from '../../models/model.js';
import type { PriceTable } from '../../models/prices.js';
import { Nullable, StringEnum } from '../../models/schema-kit.js';
import type { EngineBindings } from '../../engines/bindings.js';
import type { EngineHealth } from '../common/engine-health.js';
import type { AuthContext, IdentityService } from '../identity/identity.js';

/**
 * The catalog as data (GET /models, GET /models/{id}, GET /deprecations; the MCP tools
 * list_models and get_model_schema): each view declared once as a TypeBox schema, the routes' response schema (an OpenAPI
 * component by `$id`) and, by `Static`, this service's return type.
 */

const A2 = 'image/vendor-a/model-a-2/medium';
const RETIRED = 'image/vendor-g/model-g-3';

const DEPRECATION_EXAMPLE = {
  deprecated: true as const,
  sunset_date: '2026-05-13',
  replacement: 'image/vendor-g/model-g-5-lite',
  migration_url: `https://mediagen.example/deprecations#${RETIRED}`,
};

/** What spec 9 says the model listing carries for a deprecated model; also each /deprecations item. */
export const ModelDeprecation = Type.Object(
  {
    deprecated: Type.Literal(true, { description: 'Always true: the object is there only for a deprecated model' }),
    sunset_date: Type.String({
      format: 'date',
      description: 'From 00:00:00 UTC of this day the model answers 410 and is unavailable',
      examples: [DEPRECATION_EXAMPLE.sunset_date],
    }),
    replacement: Nullable(Type.String({ description: 'The model id to use instead', examples: [DEPRECATION_EXAMPLE.replacement] }), {
      description: 'The model id to use instead; null when there is none',
    }),
    migration_url: Type.String({
      format: 'uri',
      description: 'Where the migration is described (absolute); by default this server\'s GET /deprecations',
      examples: [DEPRECATION_EXAMPLE.migration_url],
    }),
  },
  { $id: 'ModelDeprecation', additionalProperties: false, description: "A model's deprecation (spec 9)", examples: [DEPRECATION_EXAMPLE] },
);
export type ModelDeprecation = Static<typeof ModelDeprecation>;

const A2_RATES = { text_to_image: 30_000, style_references: 35_000, moodboards: 40_000 };
const PRICE_EXAMPLE = {
  description: 'per request: moodboards when moodboards is non-empty, else style_references when image_style_references is non-empty, else text_to_image',
  rates_micro_usd: A2_RATES,
};

export const ModelPrice = Type.Object(
  {
    description: Type.String({ description: 'The rule in words: what is counted and when each rate applies', examples: [PRICE_EXAMPLE.description] }),
    rates_micro_usd: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: "The model's named rates in force (the config file's `prices` applied), in integer micro-USD: 1 USD = 1,000,000",
      examples: [A2_RATES],
    }),
  },
  { $id: 'ModelPrice', additionalProperties: false, description: 'What a job of the model is charged when it completes (spec 8)', examples: [PRICE_EXAMPLE] },
);
export type ModelPrice = Static<typeof ModelPrice>;

/** JSON Schema's own dialect for the request schemas: Ajv's default, which the routes validate with. */
export const REQUEST_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

const REQUEST_SCHEMA_EXAMPLE = {
  $schema: REQUEST_SCHEMA_DIALECT,
  type: 'object',
  properties: { prompt: { type: 'string', description: 'Text describing the image to generate.' } },
  required: ['prompt'],
  additionalProperties: false,
};

const MODEL_EXAMPLE = {
  id: A2,
  kind: 'image' as const,
  description: 'Generate an image with model-a-2 (medium)',
  available: true,
  price: PRICE_EXAMPLE,
  request_schema: REQUEST_SCHEMA_EXAMPLE,
};
const RETIRED_EXAMPLE = {
  id: RETIRED,
  kind: 'image' as const,
  description: 'Retired: use image/vendor-g/model-g-5-lite',
  available: false,
  deprecation: DEPRECATION_EXAMPLE,
};

const ENGINE_STATES = ['closed', 'half_open', 'open', 'unknown'] as const;
const ENGINES_EXAMPLE = [
  { name: 'comfyui:gpu', state: 'open' as const },
  { name: 'provider:fal', state: 'closed' as const },
];

export const ModelView = Type.Object(
  {
    id: Type.String({
      description: 'The model id: its path, which is also the job `type`; POST /generate/{id} creates a job (unless `endpoint` names another)',
      examples: [A2],
    }),
    endpoint: Type.Optional(
      Type.String({
        description: 'Where a POST creates its jobs when that is not /generate/{id}: `/styles/train` for style training (job type `loraTraining`)',
        examples: ['/styles/train'],
      }),
    ),
    kind: StringEnum(OUTPUT_KINDS, { description: 'What the model makes', examples: ['image'] }),
    description: Type.String({ description: 'What the model does, in one line', examples: [MODEL_EXAMPLE.description] }),
    available: Type.Boolean({
      description: 'Whether POST /generate/{id} takes requests now; false for a model past its sunset (it answers 410)',
      examples: [true],
    }),
    price: Type.Optional(ModelPrice),
    request_schema: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'The JSON Schema (draft-07, standalone) that POST /generate/{id} validates the body with; defaults are applied and ' +
          'stored with the job. Absent for a retired model, which takes no body.',
        examples: [REQUEST_SCHEMA_EXAMPLE],
      }),
    ),
    deprecation: Type.Optional(ModelDeprecation),
    engines: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ description: 'The engine id as the config names it: `local`, `comfyui:<name>`, `provider:<name>`, `command:<name>`, `remote:<pool>`', examples: ['comfyui:gpu'] }),
            state: StringEnum(ENGINE_STATES, {
              description:
                "The engine's circuit in the process that answered (docs/routing.md, \"Circuits\"): `closed` (taking jobs), `half_open` (one probe job may go), " +
                '`open` (skipped by chains, or its jobs wait); `unknown` for a remote pool, or when the process that answered runs no jobs (`serve --role api`)',
              examples: ['closed'],
            }),
          },
          { additionalProperties: false, description: 'An engine that serves the model', examples: [ENGINES_EXAMPLE[0]] },
        ),
        {
          description:
            'Only GET /models/{id}, only for a token of an owner or admin: the engines that serve the model, in the order of its chain ' +
            '(docs/routing.md): the first takes its jobs, the next ones when those before refuse or are full',
          examples: [ENGINES_EXAMPLE],
        },
      ),
    ),
  },
  { $id: 'Model', additionalProperties: false, description: 'A model of the catalog', examples: [MODEL_EXAMPLE, RETIRED_EXAMPLE] },
);
export type ModelView = Static<typeof ModelView>;

export const ModelList = Type.Object(
  { items: Type.Array(ModelView, { description: 'Every model, retired ones included, in the order of the catalog' }) },
  { $id: 'ModelList', description: 'The model catalog', examples: [{ items: [MODEL_EXAMPLE, RETIRED_EXAMPLE] }] },
);
export type ModelList = Static<typeof ModelList>;

const DEPRECATED_ITEM_EXAMPLE = { model: RETIRED, ...DEPRECATION_EXAMPLE };

export const DeprecationList = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        { model: Type.String({ description: 'The model id (path)', examples: [RETIRED] }), ...ModelDeprecation.properties },
        { description: 'A deprecated or retired model', examples: [DEPRECATED_ITEM_EXAMPLE] },
      ),
      { description: 'Deprecated and retired models' },
    ),
  },
  { $id: 'DeprecationList', description: 'Deprecated and retired models', examples: [{ items: [DEPRECATED_ITEM_EXAMPLE] }] },
);
export type DeprecationList = Static<typeof DeprecationList>;

/** A deprecation as the API shows it, its migration link made absolute under the public URL. */
export function toDeprecationView(dep: Deprecation, publicUrl: string): ModelDeprecation {
  return {
    deprecated: true,
    sunset_date: dep.sunsetDate,
    replacement: dep.replacement ?? null,
    migration_url: resolveUrl(dep.migrationUrl, publicUrl),
  };
}

/** The large parts of a model's view, built once: they never change while the process runs. */
type FixedView = Pick<ModelView, 'price' | 'request_schema'>;

/** What GET /models/{id} shows owners and admins of a model's engines: its chain, and each engine's circuit. */
export interface ModelRouting {
  readonly bindings: Pick<EngineBindings, 'chain'>;
  readonly health: Pick<EngineHealth, 'of'>;
  readonly identity: Pick<IdentityService, 'roleOf'>;
}

/** Reading the catalog: what each model is, costs and takes, and whether it takes requests now. */
export class ModelService {
  readonly #catalog: Catalog;
  readonly #clock: Clock;
  readonly #fixed: ReadonlyMap<string, FixedView>;
  readonly #routing: ModelRouting | undefined;

  /** `routing`: absent, no caller sees a model's engines. */
  constructor(catalog: Catalog, prices: PriceTable, clock: Clock, routing?: ModelRouting) {
    this.#catalog = catalog;
    this.#clock = clock;
    this.#fixed = new Map(catalog.entries.map((e) => [e.path, fixedView(e, prices)]));
    this.#routing = routing;
  }

  /**
   * One model as `auth` may see it: an owner's or admin's token also sees the engines that serve
   * it (which engines a server has, and their health, are the operator's business). Without a
   * token, or a member's, the same view as `get`.
   */
  async getAs(auth: AuthContext | null, id: string, publicUrl: string): Promise<ModelView> {
    const view = this.get(id, publicUrl);
    const routing = this.#routing;
    const chain = routing?.bindings.chain(view.id);
    if (!auth || !routing || !chain) return view;
    const role = await routing.identity.roleOf(auth.workspace, auth.memberEmail);
    if (role !== 'owner' && role !== 'admin') return view;
    return { ...view, engines: routing.health.of(chain.engines) };
  }

  list(publicUrl: string): ModelList {
    const nowMs = this.#clock.nowMs();
    return { items: this.#catalog.entries.map((e) => this.#view(e, nowMs, publicUrl)) };
  }

  /** Unknown ids are not_found. */
  get(id: string, publicUrl: string): ModelView {
    const entry = this.#catalog.get(id);
    if (!entry) throw notFound(`model '${id}' not found; GET /models lists every model`);
    return this.#view(entry, this.#clock.nowMs(), publicUrl);
  }

  /** Every deprecated model, retired ones included (GET /deprecations, the default migration link). */
  deprecations(publicUrl: string): DeprecationList {
    return {
      items: this.#catalog.entries.flatMap((e) => (e.deprecation ? [{ model: e.path, ...toDeprecationView(e.deprecation, publicUrl) }] : [])),
    };
  }

  #view(entry: CatalogEntry, nowMs: number, publicUrl: string): ModelView {
    return {
      id: entry.path,
      ...(entry.route ? { endpoint: entry.route } : {}),
      kind: entry.kind,
      description: entry.summary,
      available: isAvailable(entry, nowMs),
      ...(entry.deprecation ? { deprecation: toDeprecationView(entry.deprecation, publicUrl) } : {}),
      ...this.#fixed.get(entry.path)!,
    };
  }
}

function fixedView(entry: CatalogEntry, prices: PriceTable): FixedView {
  const rates = prices.rates(entry.path);
  return {
    ...(entry.price && rates ? { price: { description: entry.price.unit, rates_micro_usd: { ...rates } } } : {}),
    // A plain JSON copy of the schema the validator was compiled from: TypeBox's symbol keys
    // dropped, nothing referenced from elsewhere, so a client can compile it on its own.
    ...(entry.request ? { request_schema: { $schema: REQUEST_SCHEMA_DIALECT, ...(JSON.parse(JSON.stringify(entry.request)) as object) } } : {}),
  };
}
