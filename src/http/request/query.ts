import { Type } from '@sinclair/typebox';
import { parseIsoMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { invalid } from '../../domain/error-catalogue.js';

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

/**
 * The `cursor` and `limit` of every paged list's query schema, to spread into it: `rows` says what
 * the cursor's time is of ("jobs created", "assets uploaded", ...).
 */
export function PageQuery(rows: string) {
  return {
    cursor: Type.Optional(
      Type.String({ format: 'date-time', description: `Only ${rows} before this time: the previous page's next_cursor`, examples: ['2026-11-22T12:00:00.000000Z'] }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default, description: 'Page size', examples: [100] })),
  };
}

/** A checked PageQuery as the services take it: the page size and the time before which rows are listed. */
export function pageParams(q: { readonly cursor?: string; readonly limit?: number }): { limit: number; before: Micros | undefined } {
  return { limit: q.limit ?? PAGE_LIMIT.default, before: toMicros(q.cursor) };
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

/** The JSON Schema subset a query-string schema uses: an object of optional scalar properties. */
interface QuerySchema {
  readonly properties?: Readonly<Record<string, ScalarSchema>>;
}
interface ScalarSchema {
  readonly type?: string;
  readonly format?: string;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
  /** A list parameter (`type: 'array'`): at most this many items. */
  readonly maxItems?: number;
  /** A list parameter's items, when they are one of a set. */
  readonly items?: { readonly enum?: readonly string[] };
}

type QueryCheck = (query: RawQuery) => { value: Record<string, unknown> } | { error: Error };

/**
 * The validator of a route's `querystring` schema, so the schema that documents the parameters is
 * also the one that checks them (and the handler's `request.query` is what its type says). Ajv's
 * messages would be generic; these are the rules above with their messages: each parameter at
 * most once (a list may be repeated), unknown ones refused, integers in range, ISO date-times,
 * enums, comma-separated lists. Integers arrive as
 * numbers, defaults filled in; date-times stay strings (already checked; `toMicros` reads them).
 */
export function compileQueryCheck(schema: QuerySchema): QueryCheck {
  const props = Object.entries(schema.properties ?? {});
  const known = props.map(([name]) => name);
  return (query) => {
    try {
      rejectUnknown(query, known);
      const value: Record<string, unknown> = {};
      for (const [name, prop] of props) {
        const parsed = parseScalar(query, name, prop);
        if (parsed !== undefined) value[name] = parsed;
      }
      return { value };
    } catch (err) {
      return { error: err as Error };
    }
  };
}

function parseScalar(query: RawQuery, name: string, prop: ScalarSchema): unknown {
  if (prop.type === 'array') return parseList(query, name, prop);
  if (prop.type === 'integer') {
    if (single(query, name) === undefined && prop.default === undefined) return undefined;
    return parseInteger(query, name, prop);
  }
  if (prop.format === 'date-time') {
    return parseDateTime(query, name) === undefined ? undefined : single(query, name);
  }
  const raw = single(query, name);
  if (raw !== undefined && prop.enum && !prop.enum.includes(raw)) {
    throw invalid(`query parameter '${name}' must be one of ${prop.enum.join(', ')}, got '${raw}'`);
  }
  return raw ?? prop.default;
}

/** A list parameter, comma-separated, repeated, or both: `ids=a,b&ids=c`. */
function parseList(query: RawQuery, name: string, prop: ScalarSchema): string[] | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(',')).map((v) => v.trim());
  if (items.some((v) => v === '')) throw invalid(`query parameter '${name}' must be a comma-separated list with no empty items`);
  const unknown = prop.items?.enum && items.find((v) => !prop.items!.enum!.includes(v));
  if (unknown !== undefined && prop.items?.enum) {
    throw invalid(`query parameter '${name}' must be a comma-separated list of ${prop.items.enum.join(', ')}, got '${unknown}'`);
  }
  if (prop.maxItems !== undefined && items.length > prop.maxItems) {
    throw invalid(`query parameter '${name}' must have at most ${prop.maxItems} items, got ${items.length}`);
  }
  return items;
}

function parseInteger(query: RawQuery, name: string, prop: ScalarSchema): number {
  const min = prop.minimum ?? 0;
  const max = prop.maximum ?? Number.MAX_SAFE_INTEGER;
  const raw = single(query, name);
  if (raw === undefined) return prop.default as number;
  // At most 7 digits: a page size or the like, never a number JavaScript would round.
  if (!/^\d{1,7}$/.test(raw) || +raw < min || +raw > max) {
    throw invalid(`query parameter '${name}' must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return +raw;
}

/** A date-time the query check has accepted, as microseconds. */
export function toMicros(checked: string | undefined): Micros | undefined {
  return checked === undefined ? undefined : parseIsoMicros(checked);
}

/** A UTC offset as ISO 8601 writes one (`+02:00`, `-05:30`, `Z`), -14:00 to +14:00. */
export const UTC_OFFSET_PATTERN = '^(Z|[+-]\\d{2}:\\d{2})$';

/** A checked query's `name` read as a UTC offset, in minutes east of UTC; undefined when absent. */
export function parseUtcOffset(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'Z') return 0;
  const m = /^([+-])(\d{2}):([0-5]\d)$/.exec(raw);
  const minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : undefined;
  if (minutes === undefined || Math.abs(minutes) > 14 * 60) return fail();
  return minutes;

  function fail(): never {
    // A raw '+' in a query string arrives as a space.
    const hint = raw!.startsWith(' ') ? "; send the '+' as %2B" : '';
    throw invalid(`query parameter '${name}' must be a UTC offset from -14:00 to +14:00 such as +02:00 or -05:30, got '${raw}'${hint}`);
  }
}
