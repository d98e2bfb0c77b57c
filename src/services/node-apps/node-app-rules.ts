import { isAbsoluteHttpUrl } from '../../lib/urls.js';
import { invalid } from '../../domain/error-catalogue.js';
import { NODE_APP_SLUG_RE } from '../../domain/node-app-plan.js';
import type { JsonObject } from '../../store/node-app-store.js';
import { isPlainObject as isObject } from '../../lib/plain-object.js';

/** What a node app and its versions may hold (docs/decisions.md, "Node apps"). */
export const NODE_APP_LIMITS = {
  nameMax: 200,
  slugMax: 100,
  descriptionMax: 2000,
  schemaMaxBytes: 1024 * 1024,
  graphMaxBytes: 1024 * 1024,
  exampleOutputsMax: 20,
  exampleOutputUrlMax: 2048,
} as const;

export function checkNodeAppName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > NODE_APP_LIMITS.nameMax) {
    throw invalid(`node app name must be 1 to ${NODE_APP_LIMITS.nameMax} characters`);
  }
  return n;
}

/** A given slug must already be in canonical form; none given, it is made from the name. */
export function checkSlug(slug: string | undefined, name: string): string {
  if (slug === undefined) {
    const derived = name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, NODE_APP_LIMITS.slugMax)
      .replace(/-+$/, '');
    if (!derived) throw invalid(`the name '${name}' has no letters a-z or digits to make a slug of; give a slug`);
    return derived;
  }
  if (slug.length > NODE_APP_LIMITS.slugMax || !NODE_APP_SLUG_RE.test(slug)) {
    throw invalid(
      `slug must be 1 to ${NODE_APP_LIMITS.slugMax} characters of lowercase letters a-z and digits in words joined by single hyphens (like my-app-2), got '${slug}'`,
    );
  }
  return slug;
}

export function checkDescription(description: string | undefined): string {
  const d = description ?? '';
  if (d.length > NODE_APP_LIMITS.descriptionMax) {
    throw invalid(`description must be at most ${NODE_APP_LIMITS.descriptionMax} characters, got ${d.length}`);
  }
  return d;
}

/**
 * An input or output schema of spec 2.5: `type` (string), `properties` (object) and `required`
 * (strings, default []). Other keys are kept as given: they are the author's OpenAPI.
 */
export function checkSchema(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw invalid(`${what} must be a JSON object`);
  if (typeof value.type !== 'string') throw invalid(`${what}: 'type' must be a string`);
  if (!isObject(value.properties)) throw invalid(`${what}: 'properties' must be an object`);
  // Present means given: `"required": null` is refused, not read as absent.
  const required = Object.hasOwn(value, 'required') ? value.required : [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
    throw invalid(`${what}: 'required' must be an array of strings`);
  }
  const schema = { ...value, required };
  if (Buffer.byteLength(JSON.stringify(schema)) > NODE_APP_LIMITS.schemaMaxBytes) {
    throw invalid(`${what} must be at most 1 MiB of JSON`);
  }
  return schema;
}

export function checkExampleOutputs(urls: readonly string[]): string[] {
  if (urls.length > NODE_APP_LIMITS.exampleOutputsMax) {
    throw invalid(`at most ${NODE_APP_LIMITS.exampleOutputsMax} example outputs, got ${urls.length}`);
  }
  for (const url of urls) {
    if (url.length > NODE_APP_LIMITS.exampleOutputUrlMax) {
      throw invalid(`example output URLs must be at most ${NODE_APP_LIMITS.exampleOutputUrlMax} characters; one has ${url.length}`);
    }
    if (!isAbsoluteHttpUrl(url)) {
      throw invalid(`example output '${url}' is not an absolute http or https URL`);
    }
  }
  return [...urls];
}
