import { ConfigError } from '../config/readers.js';
import { sampleOf } from '../lib/json-schema-sample.js';
import { isPlainObject } from '../lib/plain-object.js';
import { EXAMPLE_MEDIA_URL, MEDIA_URL_PATTERN } from './schema-kit.js';
import { compileNow, isKnownFormat } from './validation.js';

/**
 * A custom model's request schema (the config file's `models[].request`), checked and completed
 * at start (docs/config.md, "The request schema"). It must keep to the subset of JSON Schema the
 * catalog's own schemas use, so everything that reads those reads it too: the strict validator
 * and its one-sentence messages, the URL rules, the OpenAPI document and its examples, node-app
 * publish. Every refusal names the field: `models[2] (image/acme/x).request.properties.width: ...`.
 *
 * Completed: `additionalProperties: false` on every object that leaves it out (unknown fields are
 * refused, as by every built-in model); a `"format": "media-url"` string becomes the catalog's
 * media URL field (schema-kit `Uri`), so private-address refusal, assets as inputs and signed
 * inputs for remote workers cover it; a field without `examples` gets one made from its schema.
 */

type Json = Record<string, unknown>;

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
const ANNOTATIONS = ['description', 'title', 'default', 'examples'];
const NUMERIC = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: NUMERIC,
  integer: NUMERIC,
  array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'required', 'additionalProperties'],
  boolean: [],
  null: [],
};
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems'];
/** A property name: what reads well in a URL field path, a message and a generated client. */
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** Names that are the machinery of JavaScript objects: as keys they would change a schema's prototype, not add a property. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const DIALECT_RE = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/** The format that marks a media input URL field. */
export const MEDIA_URL_FORMAT = 'media-url';

const fail = (at: string, why: string): never => {
  throw new ConfigError(`${at}: ${why}`);
};

const typesOf = (node: Json): string[] => (typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? (node.type as string[]) : []);

function checkType(node: Json, at: string): string[] {
  if (node.type === undefined) {
    if (node.enum === undefined && node.const === undefined) fail(at, "needs a 'type' (string, number, integer, boolean, object, array or null)");
    return [];
  }
  const types = typesOf(node);
  if (types.length === 0 || types.some((t) => typeof t !== 'string' || !TYPES.includes(t)) || new Set(types).size !== types.length) {
    fail(`${at}.type`, `must be one of ${TYPES.join(', ')}, or an array of them`);
  }
  return types;
}

/** The subset's keywords, node by node; returns the completed node (never the one given). */
function walk(node: unknown, at: string): Json {
  if (!isPlainObject(node)) return fail(at, 'must be a JSON Schema object');
  if (node.anyOf !== undefined) {
    const extra = Object.keys(node).find((k) => k !== 'anyOf' && !ANNOTATIONS.includes(k));
    if (extra !== undefined) fail(at, `'${extra}' cannot stand beside anyOf; put it in the branches`);
    if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) fail(`${at}.anyOf`, 'must be a non-empty array of schemas');
    return { ...node, anyOf: (node.anyOf as unknown[]).map((b, i) => walk(b, `${at}.anyOf[${i}]`)) };
  }
  const types = checkType(node, at);
  const allowed = new Set(['type', 'enum', 'const', ...ANNOTATIONS, ...types.flatMap((t) => BY_TYPE[t] ?? [])]);
  for (const key of Object.keys(node)) {
    if (!allowed.has(key)) {
      const hint = Object.values(BY_TYPE).some((ks) => ks.includes(key)) ? ` for type ${types.join(' or ') || '(none)'}` : '; see docs/config.md for the keywords a request schema may use';
      fail(`${at}.${key}`, `keyword not supported${hint}`);
    }
  }
  if (node.enum !== undefined && (!Array.isArray(node.enum) || node.enum.length === 0)) fail(`${at}.enum`, 'must be a non-empty array');
  if (node.examples !== undefined && (!Array.isArray(node.examples) || node.examples.length === 0)) fail(`${at}.examples`, 'must be a non-empty array of values');
  if (node.description !== undefined && (typeof node.description !== 'string' || node.description.trim() === '')) fail(`${at}.description`, 'must be a non-empty string');
  for (const key of NUMERIC) if (node[key] !== undefined && (typeof node[key] !== 'number' || !Number.isFinite(node[key]))) fail(`${at}.${key}`, 'must be a number');
  for (const key of COUNTS) if (node[key] !== undefined && !(Number.isSafeInteger(node[key]) && (node[key] as number) >= 0)) fail(`${at}.${key}`, 'must be a non-negative integer');
  if (node.pattern !== undefined) checkPattern(node.pattern, `${at}.pattern`);
  const out: Json = { ...node };
  if (node.format !== undefined) {
    if (typeof node.format !== 'string') fail(`${at}.format`, 'must be a string');
    if (node.format === MEDIA_URL_FORMAT) Object.assign(out, mediaUrl(node, at));
    else if (!isKnownFormat(node.format as string)) fail(`${at}.format`, `unknown format '${String(node.format)}'; use ${MEDIA_URL_FORMAT} for a media input URL, or a format Ajv knows (uri, date-time, email, ...)`);
  }
  if (node.items !== undefined) out.items = withExample(walk(node.items, `${at}.items`), `${at}.items`);
  if (types.includes('object')) Object.assign(out, objectParts(node, at));
  return out;
}

function checkPattern(pattern: unknown, at: string): void {
  if (typeof pattern !== 'string') fail(at, 'must be a string');
  try {
    new RegExp(pattern as string, 'u');
  } catch (err) {
    fail(at, `is not a regular expression: ${(err as Error).message}`);
  }
}

/** `{"type": "string", "format": "media-url"}` as the catalog writes a media URL field. */
function mediaUrl(node: Json, at: string): Json {
  if (node.type !== 'string') fail(at, `a ${MEDIA_URL_FORMAT} field must have "type": "string"`);
  if (node.pattern !== undefined) fail(`${at}.pattern`, `a ${MEDIA_URL_FORMAT} field takes the media URL rule; leave pattern out`);
  return { format: 'uri', pattern: MEDIA_URL_PATTERN, ...(node.examples === undefined ? { examples: [EXAMPLE_MEDIA_URL] } : {}) };
}

function objectParts(node: Json, at: string): Json {
  const props = node.properties ?? {};
  if (!isPlainObject(props)) return fail(`${at}.properties`, 'must be an object of property schemas');
  const properties: Json = {};
  for (const [name, sub] of Object.entries(props)) {
    const where = `${at}.properties.${name}`;
    if (!NAME_RE.test(name)) fail(where, 'a property name is 1 to 64 letters, digits, _, - and ., starting with a letter or _');
    if (RESERVED_NAMES.has(name)) fail(where, `'${name}' is reserved; give the property another name`);
    if (!isPlainObject(sub) || typeof sub.description !== 'string' || sub.description.trim() === '') {
      fail(where, 'needs a description (clients read it in GET /models and the OpenAPI document)');
    }
    properties[name] = withExample(walk(sub, where), where);
  }
  const required = node.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string') || new Set(required).size !== required.length) {
    fail(`${at}.required`, 'must be an array of distinct property names');
  }
  const missing = (required as string[]).find((r) => !Object.hasOwn(properties, r));
  if (missing !== undefined) fail(`${at}.required`, `names '${missing}', which is not in properties`);
  if (node.additionalProperties !== undefined && node.additionalProperties !== false) {
    fail(`${at}.additionalProperties`, 'must be false or left out: request bodies refuse unknown properties');
  }
  return { properties, ...(node.required !== undefined ? { required } : {}), additionalProperties: false };
}

/** The field's examples and default checked against it; one made up when it gives none. */
function withExample(field: Json, at: string): Json {
  const check = compileField(field, at);
  if (field.default !== undefined && !check(field.default)) fail(`${at}.default`, `${JSON.stringify(field.default)} is not valid for the field: ${check.why}`);
  if (field.examples !== undefined) {
    (field.examples as unknown[]).forEach((v, i) => {
      if (!check(v)) fail(`${at}.examples[${i}]`, `${JSON.stringify(v)} is not valid for the field: ${check.why}`);
    });
    return field;
  }
  if (typesOf(field).includes('object')) return field; // its properties carry the examples
  const made = sampleOf(field, { prefer: 'default' });
  if (!check(made)) return fail(at, `give it an example ("examples": [...]): none can be made up from its schema (${check.why})`);
  return { ...field, examples: [made] };
}

/**
 * A checker of values for `schema` by the request Ajv, with the reason of its last refusal. A field
 * is checked as the one property of an object: the Ajv refuses a `default` at a schema's root.
 */
function compileField(schema: Json, at: string, root = false): ((v: unknown) => boolean) & { why: string } {
  let validate: ReturnType<typeof compileNow>;
  try {
    validate = compileNow(root ? schema : { type: 'object', properties: { value: schema } });
  } catch (err) {
    return fail(at, (err as Error).message);
  }
  const check = Object.assign(
    (v: unknown) => {
      // A copy: the request Ajv fills in defaults.
      const ok = validate(root ? structuredClone(v) : { value: structuredClone(v) });
      const first = validate.errors?.[0];
      const path = (first?.instancePath ?? '').replace(root ? /^/ : /^\/value/, '');
      check.why = ok ? '' : `${path ? `${path.slice(1).replaceAll('/', '.')} ` : ''}${first?.message ?? 'is invalid'}`;
      return ok;
    },
    { why: '' },
  );
  return check;
}

/**
 * The request schema of the model labelled `where`, checked and completed, compiled once by the
 * request Ajv: a ConfigError naming the field for anything it cannot be.
 */
export function customRequestSchema(raw: Readonly<Record<string, unknown>>, where: string): Json {
  const at = `${where}.request`;
  const { $schema: dialect, ...rest } = raw;
  if (dialect !== undefined && !(typeof dialect === 'string' && DIALECT_RE.test(dialect))) {
    fail(`${at}.$schema`, 'request schemas are JSON Schema draft-07 (http://json-schema.org/draft-07/schema#); leave $schema out or name that');
  }
  if (rest.type !== 'object') fail(`${at}.type`, 'must be "object": a request body is a JSON object');
  const schema = walk(rest, at);
  const check = compileField(schema, at, true);
  ((schema.examples as unknown[] | undefined) ?? []).forEach((v, i) => {
    if (!check(v)) fail(`${at}.examples[${i}]`, `is not a valid request: ${check.why}`);
  });
  return schema;
}
