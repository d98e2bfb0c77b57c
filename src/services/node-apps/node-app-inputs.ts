import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { describeBodyErrors } from '../../models/validation.js';
import type { JsonObject } from '../../store/node-app-store.js';
import { isPlainObject } from '../../lib/plain-object.js';

// ajv-formats is CommonJS; under node16 ESM its callable is the default export's default.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

/**
 * A version's input schema is its author's JSON Schema in OpenAPI 3.1's dialect (2020-12), so
 * unknown keywords (an `x-` extension, `example`) are tolerated, unlike in the catalog's own
 * schemas, and a `$schema` naming another draft is read as 2020-12 rather than refused. As for
 * model bodies: no coercion, unknown properties as the schema says, defaults filled in. One Ajv
 * per schema: two versions may carry the same `$id`, and a dropped validator takes its Ajv's
 * caches with it.
 */
function compile(schema: JsonObject): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: true, strict: false });
  addFormats(ajv);
  const { $schema: _dialect, ...rest } = structuredClone(schema) as Record<string, unknown>;
  return ajv.compile(rest);
}

/**
 * The validator of an input schema, or invalid_request saying why it cannot be one. Publishing
 * calls it to refuse such a schema; execute, for versions stored before that check.
 */
export function compileInputSchema(schema: JsonObject): ValidateFunction {
  try {
    return compile(schema);
  } catch (err) {
    throw invalid(`input schema is not a JSON Schema this server can check inputs with: ${(err as Error).message}`);
  }
}

/** Compiled validators kept at once; versions never change, so their id is the key. */
const INPUT_VALIDATORS_MAX = 256;

/** The first fault of an execute body, in the catalog's words (a `pattern` is the author's, not a URL rule). */
function describe(errors: readonly ErrorObject[], schema: object): string {
  const first = errors[0];
  if (first?.keyword === 'pattern') {
    const field = first.instancePath.split('/').slice(1).join('.');
    return `'${field}' must match the pattern ${String(first.params.pattern)}`;
  }
  return describeBodyErrors(errors, schema);
}

/**
 * The execute body checked against a version's input schema, each schema compiled once and kept
 * by version id, failures too (at most INPUT_VALIDATORS_MAX, the least recently used dropped first).
 */
export class NodeAppInputs {
  /** A version's validator, or why its schema cannot be one: a failure is kept as long. */
  readonly #compiled = new Map<string, ValidateFunction | DomainError>();

  /** The inputs with their defaults filled in, or invalid_request naming the field. */
  check(versionId: string, schema: JsonObject, body: unknown): Record<string, unknown> {
    if (!isPlainObject(body)) throw invalid('the request body must be a JSON object of the node app\'s inputs');
    const validate = this.#validator(versionId, schema);
    if (!validate(body)) throw invalid(describe(validate.errors ?? [], schema));
    return body;
  }

  #validator(versionId: string, schema: JsonObject): ValidateFunction {
    let compiled = this.#compiled.get(versionId);
    if (compiled) {
      // Map order is insertion order: taking it out and back makes it the most recent.
      this.#compiled.delete(versionId);
    } else {
      try {
        compiled = compileInputSchema(schema);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        compiled = invalid(`this node app version's ${err.message}; publish a version with a valid JSON Schema`);
      }
      if (this.#compiled.size >= INPUT_VALIDATORS_MAX) this.#compiled.delete(this.#compiled.keys().next().value!);
    }
    this.#compiled.set(versionId, compiled);
    if (compiled instanceof DomainError) throw compiled;
    return compiled;
  }
}
