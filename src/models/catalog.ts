import { parseDateOnly } from '../lib/time.js';
import { ALIAS_SUNSET_DATE } from './aliases.js';
import { MODELS } from './registry.js';
import { bodyValidator } from './validation.js';
import type { BodyValidator } from './validation.js';
import type { ModelModule } from './model.js';
import { isSunset } from './deprecation.js';
import type { Deprecation } from './deprecation.js';
import type { DeprecationOverride } from '../config/options.js';

export interface CatalogEntry extends Omit<ModelModule, 'deprecation'> {
  readonly deprecation?: Deprecation;
  /** Checks a request body against `request` (present exactly when `request` is). */
  readonly validate?: BodyValidator;
}

/** The models this server offers, with the config file's deprecations applied. Frozen. */
export interface Catalog {
  readonly entries: readonly CatalogEntry[];
  readonly aliasSunsetDate: string;
  readonly aliasSunsetMs: number;
  get(path: string): CatalogEntry | undefined;
}

/**
 * Whether the model takes requests at `nowMs`: it has a request schema (a retired one has none)
 * and is not past its sunset. Job creation refuses the others with 410; GET /models marks them
 * unavailable.
 */
export function isAvailable(entry: CatalogEntry, nowMs: number): boolean {
  return entry.request !== undefined && !(entry.deprecation && isSunset(entry.deprecation, nowMs));
}

function dateMs(date: string, what: string): number {
  const ms = parseDateOnly(date);
  if (ms === undefined) throw new Error(`${what}: '${date}' is not a date (YYYY-MM-DD)`);
  return ms;
}

/**
 * Builds the catalog. The default migration link is GET /deprecations on this server (relative
 * here, made absolute against the public URL when sent), so a Link always points somewhere real.
 */
export function buildCatalog(opts: {
  deprecations?: readonly DeprecationOverride[];
  models?: readonly ModelModule[];
}): Catalog {
  const models = opts.models ?? MODELS;
  const overrides = new Map<string, DeprecationOverride>();
  for (const d of opts.deprecations ?? []) {
    if (!models.some((m) => m.path === d.model)) {
      throw new Error(`deprecations: unknown model '${d.model}'`);
    }
    overrides.set(d.model, d);
  }
  for (const m of models) {
    // A model either takes requests (and then has a price and an engine) or exists only to answer 410.
    const takesRequests = m.request !== undefined && m.price !== undefined && m.engine !== undefined;
    const retired = m.request === undefined && m.price === undefined && m.engine === undefined && m.deprecation !== undefined;
    if (!takesRequests && !retired) throw new Error(`catalog: ${m.path} needs a request schema, a price and an engine, or a deprecation`);
  }
  const entries = models.map((m): CatalogEntry => {
    const validate = m.request ? { validate: bodyValidator(m.request, m.check) } : {};
    const o = overrides.get(m.path);
    const dep = o
      ? { sunsetDate: o.sunset_date, replacement: o.replacement, migrationUrl: o.migration_url }
      : m.deprecation;
    if (!dep) return Object.freeze({ ...m, ...validate, deprecation: undefined });
    const deprecation: Deprecation = Object.freeze({
      sunsetDate: dep.sunsetDate,
      sunsetMs: dateMs(dep.sunsetDate, `deprecation of ${m.path}`),
      ...(dep.replacement ? { replacement: dep.replacement } : {}),
      migrationUrl: dep.migrationUrl ?? `deprecations#${m.path}`,
    });
    return Object.freeze({ ...m, ...validate, deprecation });
  });
  const byPath = new Map(entries.map((e) => [e.path, e]));
  return Object.freeze({
    entries: Object.freeze(entries),
    aliasSunsetDate: ALIAS_SUNSET_DATE,
    aliasSunsetMs: dateMs(ALIAS_SUNSET_DATE, 'alias sunset'),
    get: (path: string) => byPath.get(path),
  });
}
