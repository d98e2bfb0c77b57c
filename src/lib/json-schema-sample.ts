import { isPlainObject as isObject } from './plain-object.js';

/**
 * A value valid against a JSON Schema, made up from it: for the OpenAPI document's examples and for
 * the values a node-app graph's references stand for at publish (docs/node-apps.md, "The step body
 * check, exactly"). A value the schema names itself comes first; else one of its type, within its
 * bounds. Objects get their required properties only, so a made-up request is the smallest valid one.
 */

type Schema = Readonly<Record<string, unknown>>;

export interface SampleOptions {
  /** Resolves a `$ref`; without it a `$ref` schema samples as an empty one. */
  readonly lookup?: (ref: string) => unknown;
  /**
   * Which value a schema names comes first: `default` (its default, const, first enum value,
   * example, first examples entry: what a caller omitting it gets) or `examples` (its first
   * examples entry, then the others: what documentation shows).
   */
  readonly prefer?: 'default' | 'examples';
  /** Strings for a property of this name with no value of its own, where `"x"` would read oddly. */
  readonly names?: Readonly<Record<string, string>>;
}

const has = (o: object, k: string) => Object.hasOwn(o, k);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const propertiesOf = (schema: Schema): Schema => (isObject(schema.properties) ? schema.properties : {});

const FORMAT_SAMPLES: Readonly<Record<string, string>> = {
  uri: 'https://example.com/input.png',
  url: 'https://example.com/input.png',
  iri: 'https://example.com/input.png',
  'uri-reference': 'https://example.com/input.png',
  email: 'user@example.com',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  uuid: '00000000-0000-4000-8000-000000000000',
};

const MAX_DEPTH = 8;

/** A value the schema names itself, in the order `prefer` says; undefined when it names none. */
export function namedValue(s: unknown, prefer: SampleOptions['prefer'] = 'default'): { value: unknown } | undefined {
  if (!isObject(s)) return undefined;
  const examples = Array.isArray(s.examples) && s.examples.length > 0 ? { value: s.examples[0] } : undefined;
  if (prefer === 'examples' && examples) return examples;
  if (has(s, 'default')) return { value: s.default };
  if (has(s, 'const')) return { value: s.const };
  if (Array.isArray(s.enum) && s.enum.length > 0) return { value: s.enum[0] };
  if (has(s, 'example')) return { value: s.example };
  return examples;
}

/** A value of the schema's (first non-null) type, within its bounds. */
export function sampleOf(schema: unknown, opts: SampleOptions = {}, name?: string, depth = 0): unknown {
  let s = schema;
  if (isObject(s) && typeof s.$ref === 'string' && depth < MAX_DEPTH) s = opts.lookup?.(s.$ref) ?? {};
  if (!isObject(s)) return 'x';
  const pinned = namedValue(s, opts.prefer);
  if (pinned) return pinned.value;
  const branches = [s.anyOf, s.oneOf, s.allOf].find((b): b is unknown[] => Array.isArray(b) && b.length > 0);
  // A branch that is not just `null`, for a value that says something.
  const branch = branches?.find((b) => !(isObject(b) && b.type === 'null')) ?? branches?.[0];
  if (isObject(branch) && depth < MAX_DEPTH) return sampleOf(branch, opts, name, depth + 1);
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'null') : (s.type ?? (isObject(s.properties) ? 'object' : 'string'));
  switch (type) {
    case 'integer':
    case 'number':
      return numberSample(s, type === 'integer');
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = Math.min(Math.max(num(s.minItems) ?? 1, 1), num(s.maxItems) ?? Infinity);
      return depth < MAX_DEPTH ? Array.from({ length: n }, () => sampleOf(isObject(s.items) ? s.items : {}, opts, name, depth + 1)) : [];
    }
    case 'object': {
      const props = propertiesOf(s);
      const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string' && has(props, r)) : [];
      return depth < MAX_DEPTH ? Object.fromEntries(required.map((r) => [r, sampleOf(props[r], opts, r, depth + 1)])) : {};
    }
    default: {
      const named = name !== undefined && opts.names && has(opts.names, name) ? opts.names[name] : undefined;
      const base = (typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined) ?? named ?? 'x';
      const min = num(s.minLength) ?? 0;
      return base.length >= min ? base : base.padEnd(min, 'x');
    }
  }
}

/** 1, moved into [minimum, maximum] (exclusive bounds stepped inside). */
function numberSample(s: Schema, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  const lo = num(s.minimum) ?? (exMin === undefined ? undefined : integer ? Math.floor(exMin) + 1 : exMin + step);
  const hi = num(s.maximum) ?? (exMax === undefined ? undefined : integer ? Math.ceil(exMax) - 1 : exMax - step);
  let v = 1;
  if (lo !== undefined && v < lo) v = integer ? Math.ceil(lo) : lo;
  if (hi !== undefined && v > hi) v = integer ? Math.floor(hi) : hi;
  return v;
}
