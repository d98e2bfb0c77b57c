import type { TObject } from '@sinclair/typebox';
import type { MicroUsd } from '../domain/money.js';
import type { FieldAlias } from './aliases.js';

/** What a model makes; also the OpenAPI tag of its endpoint. */
export type OutputKind = 'image' | 'video';

/** A request as the price rule reads it: validated, defaults applied, aliases renamed. */
export type PricedRequest = Readonly<Record<string, unknown>>;

/** A model's named rates, in integer micro-USD; the config file's `prices` may replace any. */
export type Rates = Readonly<Record<string, MicroUsd>>;

/** How a model is priced (spec section 8): its rates and the rule combining them with a request. */
export interface PriceRule {
  readonly rates: Rates;
  /** What the rates mean, for docs and error messages. */
  readonly unit: string;
  readonly price: (rates: Rates, request: PricedRequest) => MicroUsd;
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
  readonly summary: string;
  readonly kind: OutputKind;
  /** The request body as spec 4.2 tables it. Absent for retired models whose shape the spec does not show. */
  readonly request?: TObject;
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
  /** The default deprecation; the config file's `deprecations` may set or replace it. */
  readonly deprecation?: {
    readonly sunsetDate: string;
    readonly replacement?: string;
    readonly migrationUrl?: string;
  };
}

/** The number of items of an array field of a request (0 when absent): most rules count something. */
export const itemCount = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
