import { invalid } from '../domain/error-catalogue.js';

/** Deprecated camelCase aliases (spec 4.2) are accepted until this date. */
export const ALIAS_SUNSET_DATE = '2026-06-19';

/** A deprecated camelCase request field and the snake_case field that replaces it. */
export interface FieldAlias {
  readonly alias: string;
  readonly field: string;
}

export const alias = (a: string, field: string): FieldAlias => ({ alias: a, field });

/**
 * Renames deprecated aliases to their fields while the aliases are accepted, and refuses them
 * (invalid_request) naming the replacement from the moment `sunsetMs` is reached.
 */
export function applyAliases(
  body: Record<string, unknown>,
  aliases: readonly FieldAlias[],
  sunsetDate: string,
  sunsetMs: number,
  nowMs: number,
): Record<string, unknown> {
  let out = body;
  for (const { alias, field } of aliases) {
    if (!Object.hasOwn(body, alias)) continue;
    if (nowMs >= sunsetMs) {
      throw invalid(`'${alias}' is no longer accepted since ${sunsetDate}; send '${field}' instead`);
    }
    if (Object.hasOwn(body, field)) {
      throw invalid(`'${alias}' is a deprecated alias of '${field}'; send only '${field}'`);
    }
    if (out === body) out = { ...body };
    out[field] = out[alias];
    delete out[alias];
  }
  return out;
}
