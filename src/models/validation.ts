import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { TObject } from '@sinclair/typebox';
import { invalid } from '../domain/error-catalogue.js';
import { MEDIA_URL_PATTERN } from './schema-kit.js';

// ajv-formats is CommonJS; under node16 ESM its callable is the default export's default.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

/**
 * Request bodies are validated strictly: no type coercion (a "5" is not 5), unknown properties
 * are errors rather than silently removed, and defaults are filled in so they are stored with the
 * job. Every transport's body goes through here, so each says the same sentence for the same fault.
 */
const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  strict: true,
  strictTypes: false,
});
addFormats(ajv);

/** Whether the request Ajv knows a `format` (ajv-formats' list). */
export const isKnownFormat = (name: string): boolean => ajv.formats[name] !== undefined;

/**
 * `schema` compiled by the request Ajv now: a model declared in the config file is compiled at
 * start, so a schema Ajv refuses stops the server (throws Ajv's error). The compiled function is
 * cached by Ajv, so the body validator's first compile of the same object reuses it.
 */
export function compileNow(schema: object): ValidateFunction {
  return ajv.compile(schema) as ValidateFunction;
}

/** A body checker for one request schema: fills in defaults in place, or throws invalid_request. */
export type BodyValidator = (body: unknown) => asserts body is Record<string, unknown>;

/** A model's rule across fields (ModelModule.check): the refusal's sentence, or undefined. */
export type CrossFieldCheck = (body: Readonly<Record<string, unknown>>) => string | undefined;

/**
 * Compiled once per schema, on its first body, not per request: a process that never validates
 * (the admin CLI, a worker) never pays for compiling every model's schema.
 */
export function bodyValidator(schema: TObject, check?: CrossFieldCheck): BodyValidator {
  let validate: ValidateFunction | undefined;
  return (body: unknown): asserts body is Record<string, unknown> => {
    validate ??= ajv.compile(schema as object) as ValidateFunction;
    if (!validate(body)) throw invalid(describeBodyErrors(validate.errors ?? [], schema));
    // Only a body of the schema's shape reaches the check, so it may read its fields as typed.
    const refusal = check?.(body as Record<string, unknown>);
    if (refusal !== undefined) throw invalid(refusal);
  };
}

/** `/styles/0/strength` → `styles[0].strength` */
function fieldName(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

/** The schema node that holds the failing keyword of `schemaPath` (`#/properties/image_url/maxLength`). */
function schemaAt(schema: object | undefined, schemaPath: string): Record<string, unknown> | undefined {
  let node: unknown = schema;
  for (const seg of schemaPath.split('/').slice(1, -1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined;
}

const count = (n: unknown, noun: string) => `${String(n)} ${noun}${n === 1 ? '' : 's'}`;

const describeType = (t: unknown) => (Array.isArray(t) ? t.join(' or ') : String(t));

/**
 * One clear sentence for the first thing wrong with a body. With allErrors off, Ajv reports the
 * first failing keyword; for a nullable field it reports each branch and then `anyOf`, so those
 * are folded into "must be X or null". `schema` (the request schema) names the fields of a failed
 * `not: {required: [...]}`: fields that exclude each other.
 */
export function describeBodyErrors(errors: readonly ErrorObject[], schema?: object): string {
  const anyOf = errors.find((e) => e.keyword === 'anyOf');
  const first = errors[0]!;
  const name = fieldName(first.instancePath);
  const subject = name ? `'${name}'` : 'the request body';
  if (anyOf && anyOf.instancePath === first.instancePath) {
    const branches = errors.filter((e) => e.instancePath === first.instancePath && e.keyword === 'type');
    if (branches.length > 1 || (branches.length === 1 && first.keyword === 'type')) {
      return `${subject} must be ${branches.map((b) => describeType(b.params.type)).join(' or ')}`;
    }
  }
  const orNull = anyOf && errors.some((e) => e.instancePath === first.instancePath && e.keyword === 'type' && e.params.type === 'null') ? ' or null' : '';
  const p = first.params as Record<string, unknown>;
  switch (first.keyword) {
    case 'additionalProperties':
      return name
        ? `unknown property '${name}.${String(p.additionalProperty)}'`
        : `unknown property '${String(p.additionalProperty)}'`;
    case 'required':
      return name
        ? `missing required property '${name}.${String(p.missingProperty)}'`
        : `missing required property '${String(p.missingProperty)}'`;
    case 'type':
      return name ? `${subject} must be ${describeType(p.type)}` : 'the request body must be a JSON object';
    case 'enum':
      return `${subject} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${orNull}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${subject} ${first.message}`;
    case 'maxItems':
      return `${subject} must have at most ${count(p.limit, 'item')}`;
    case 'minItems':
      return `${subject} must have at least ${count(p.limit, 'item')}`;
    case 'maxLength':
      // A media field too long is most often a whole file as a data: URI: say where a file goes.
      if (schemaAt(schema, first.schemaPath)?.pattern === MEDIA_URL_PATTERN) {
        return `${subject} must be at most ${count(p.limit, 'character')}; to send a larger file, upload it with POST /assets and pass the asset's URL`;
      }
      return `${subject} must be at most ${count(p.limit, 'character')}`;
    case 'minLength':
      return `${subject} must be at least ${count(p.limit, 'character')}`;
    case 'pattern':
      // The built-in schemas' only pattern is the media URL forms (schema-kit.ts); a custom model's may be its own.
      if (p.pattern !== MEDIA_URL_PATTERN) return `${subject} must match the pattern ${String(p.pattern)}${orNull}`;
      return `${subject} must be an http(s) URL or a base64 data: URI${orNull}`;
    case 'format':
      return `${subject} must be a valid ${String(p.format)}${orNull}`;
    case 'not': {
      const together = excluded(schema, first.schemaPath);
      if (together) return `${together.map((f) => `'${f}'`).join(' and ')} cannot be given together; give one of them`;
      return `${subject} ${first.message ?? 'is invalid'}`;
    }
    default:
      return `${subject} ${first.message ?? 'is invalid'}`;
  }
}

/** The `required` list of the `not` schema at `schemaPath` (`#/not`, `#/properties/x/not`), if it has one. */
function excluded(schema: object | undefined, schemaPath: string): string[] | undefined {
  let at: unknown = schema;
  for (const seg of schemaPath.split('/').slice(1)) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[seg] : undefined;
  const required = at !== null && typeof at === 'object' ? (at as { required?: unknown }).required : undefined;
  return Array.isArray(required) && required.every((r) => typeof r === 'string') ? (required as string[]) : undefined;
}
