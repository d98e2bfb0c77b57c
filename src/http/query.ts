import { parseIsoMicros } from '../lib/time.js';
import type { Micros } from '../lib/time.js';
import { invalid } from '../domain/errors.js';

/**
 * Query-string rules shared by every paginated list (GET /jobs, and the later lists that the
 * issues say are "validated like GET /jobs"): each parameter at most once, unknown ones refused so
 * a typo is not silently ignored, and a message that names the parameter.
 */
export type RawQuery = Readonly<Record<string, string | string[] | undefined>>;

export function single(query: RawQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw invalid(`query parameter '${name}' must be given at most once`);
  return v;
}

export function rejectUnknown(query: RawQuery, known: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (known.includes(key)) continue;
    throw invalid(
      known.length
        ? `unknown query parameter '${key}'; allowed: ${known.join(', ')}`
        : `unknown query parameter '${key}'; this endpoint takes none`,
    );
  }
}

/** Page sizes of every list (spec section 8): 1 to 1000, default 100. */
export const PAGE_LIMIT = { min: 1, max: 1000, default: 100 } as const;

export function parseLimit(query: RawQuery, max: number = PAGE_LIMIT.max, fallback: number = PAGE_LIMIT.default): number {
  const raw = single(query, 'limit');
  if (raw === undefined) return fallback;
  if (!/^\d{1,7}$/.test(raw) || +raw < PAGE_LIMIT.min || +raw > max) {
    throw invalid(`query parameter 'limit' must be an integer from ${PAGE_LIMIT.min} to ${max}, got '${raw}'`);
  }
  return +raw;
}

export function parseDateTime(query: RawQuery, name: string): Micros | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  const us = parseIsoMicros(raw);
  if (us === undefined) {
    // A raw '+' in a query string arrives as a space.
    const hint = raw.includes(' ') ? "; send a '+' in an offset as %2B" : '';
    throw invalid(`query parameter '${name}' must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z, got '${raw}'${hint}`);
  }
  return us;
}
