import type { TObject } from '@sinclair/typebox';
import type { MicroUsd } from '../domain/money.js';
import type { Usage } from '../domain/usage.js';
import type { EngineChainSpec } from '../config/routing-settings.js';
import { OUTPUT_CONTENT_TYPES } from '../outputs/output-store.js';
import type { FieldAlias } from './aliases.js';

/** What a model makes; also the OpenAPI tag of its endpoint and the `kind` GET /models shows. */
export const OUTPUT_KINDS = ['image', 'video', 'audio', '3d'] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];

/** The media types (prefix) of each kind's outputs: a 3D model is `model/gltf-binary`. */
export const KIND_TYPE_PREFIX: Readonly<Record<OutputKind, string>> = { image: 'image/', video: 'video/', audio: 'audio/', '3d': 'model/' };

/** The media types a model's main output may have: its `outputTypes` (custom models), else every served type of its kind. */
export function mainOutputTypes(m: Pick<ModelModule, 'kind' | 'outputTypes'>): readonly string[] {
  return m.outputTypes ?? OUTPUT_CONTENT_TYPES.filter((t) => t.startsWith(KIND_TYPE_PREFIX[m.kind]));
}

/** A request as the price rule reads it: validated, defaults applied, aliases renamed. */
export type PricedRequest = Readonly<Record<string, unknown>>;

/** A video's frame size in pixels and its length in seconds. */
export interface VideoShape {
  readonly width: number;
  readonly height: number;
  readonly seconds: number;
}

/** A model's named rates, in integer micro-USD; the config file's `prices` may replace any. */
export type Rates = Readonly<Record<string, MicroUsd>>;

/** How a model is priced (spec section 8): its rates and the rule combining them with a request. */
export interface PriceRule {
  readonly rates: Rates;
  /** The rule in words: what is counted and when each rate applies (GET /models shows it). */
  readonly unit: string;
  readonly price: (rates: Rates, request: PricedRequest) => MicroUsd;
  /**
   * A metered rule (priced per unit of output, which is known only when the job has run): `price`
   * is then the most a job can cost, held when it is admitted, and this what it is charged on
   * completion from what it made. The ledger never charges more than the hold.
   */
  readonly charge?: (rates: Rates, request: PricedRequest, usage: Usage) => MicroUsd;
  /**
   * The most a request can cost with these rates (a custom model's fields have maxima): the price
   * table checks it is a whole amount the server can hold whenever the config's `prices` replace a rate.
   */
  readonly maxPrice?: (rates: Rates) => number;
}

/**
 * One model, everything about it in one place: the HTTP route, OpenAPI, validation, pricing,
 * deprecation and the engine router all read it. A model takes requests (request, price and
 * engine are set) or exists only to answer 410 (none of them, and a deprecation); catalog.ts
 * refuses anything in between.
 */
export interface ModelModule {
  /** Also the job `type`, e.g. image/vendor-a/model-a-2/medium; served at POST /generate/{path}. */
  readonly path: string;
  /**
   * The endpoint that creates its jobs when it is not POST /generate/{path}: `/styles/train` for
   * style training. The generate routes skip such a model; its own route calls the same use case.
   */
  readonly route?: string;
  /**
   * Its run makes a style: the run must report exactly one `role: 'style'` file, and the job's
   * completion creates the style from it. A run of any other model that reports one fails.
   */
  readonly makesStyle?: true;
  readonly summary: string;
  readonly kind: OutputKind;
  /** The OpenAPI tag of its endpoint; default `<kind> generation` (enhancers say `image enhance`). */
  readonly tag?: string;
  /** The request body as spec 4.2 tables it. Absent for retired models whose shape the spec does not show. */
  readonly request?: TObject;
  /**
   * A rule across fields that JSON Schema cannot state (a product of two fields, say): given a body
   * that passed `request`, the sentence of a 400 naming the fields, or undefined. Applied right
   * after the schema, so every transport refuses the same bodies (catalog.ts).
   */
  readonly check?: (request: PricedRequest) => string | undefined;
  /** The OpenAPI component name of `request`, e.g. `ModelA2Request` (variants of one model share it). */
  readonly requestName?: string;
  /** Deprecated camelCase request fields, renamed until the alias sunset (aliases.ts). */
  readonly aliases: readonly FieldAlias[];
  readonly price?: PriceRule;
  /** Whether a request may ask for zero data retention (X-Api-Zero-Data-Retention over HTTP). */
  readonly zeroDataRetention: boolean;
  /**
   * The id of the engine that runs it by default, e.g. `'local'`; the config file's
   * `model_engines` may bind it elsewhere (src/engines/router.ts).
   */
  readonly engine?: string;
  /**
   * Set for a model declared in the config file's `models` (src/models/custom-models.ts): where it
   * was declared, `models[0] (image/acme/gradient-v1)`, and its `engine` as a chain (`engine` above
   * is the chain's first). No built-in engine renders it (src/engines/bindings.ts refuses binding it
   * to `local`).
   */
  readonly custom?: { readonly where: string; readonly chain?: EngineChainSpec };
  /** Its jobs' timeout when the config file's `job_timeouts_ms` names none; default `job_timeout_ms`. */
  readonly timeoutMs?: number;
  /**
   * A video model's frames and length for a request (validated, defaults applied), where its fields
   * alone do not say them (a mode that sets the resolution, a fixed shape): the local engine renders
   * exactly this, and OpenAI's video object reports it. Absent: the request's size and duration
   * fields say them (services/openai/openai-video-view.ts).
   */
  readonly videoShape?: (request: PricedRequest) => VideoShape;
  /** The media types its main output may have (a custom model's `output.content_types`); absent: any of its kind. */
  readonly outputTypes?: readonly string[];
  /** The default deprecation; the config file's `deprecations` may set or replace it. */
  readonly deprecation?: {
    readonly sunsetDate: string;
    readonly replacement?: string;
    readonly migrationUrl?: string;
  };
}

/**
 * The OpenAPI operationId of a model's generate route: `image/vendor-a/model-a-2/medium` →
 * `generateImageVendorAModelA2Medium`. Two models whose paths differ only in `.`, `_` or `-`
 * would share it, which custom-models.ts refuses.
 */
export const operationIdOf = (path: string): string =>
  `generate-${path}`.split(/[^A-Za-z0-9]+/).map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');

/** The number of items of an array field of a request (0 when absent): most rules count something. */
export const itemCount = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
