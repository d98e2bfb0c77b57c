import { literalHostRefusal } from '../lib/address-policy.js';
import { MEDIA_URL_PATTERN } from './schema-kit.js';
import { invalid } from '../domain/error-catalogue.js';
import { isPlainObject } from '../lib/plain-object.js';

/**
 * Refusing at the door what the address guard would refuse later (without --allow-private-urls):
 * a webhook URL or input URL whose host is a literal private, loopback, link-local, metadata or
 * otherwise refused address, or `localhost`, is invalid_request naming the field, instead of a job accepted,
 * billed for nothing and failed (or a webhook silently never sent). Names are not resolved here:
 * DNS can change before the job runs, so the connect-time guard (src/lib/safe-fetch.ts) still
 * judges every name.
 *
 * Which body fields are URLs is read from the request schema: every string with the catalog's
 * media URL pattern (schema-kit `Uri`), at any depth, in arrays and nullable unions too. A new
 * model's URL fields are covered by declaring them with `Uri`.
 */

type Schema = {
  readonly type?: unknown;
  readonly pattern?: unknown;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
};

const isUrlField = (schema: Schema) => schema.type === 'string' && schema.pattern === MEDIA_URL_PATTERN;

/** Calls `visit` with each URL field of `value` (shaped by `schema`) and its name, `refs[0].url`. */
function walk(schema: Schema, value: unknown, name: string, visit: (name: string, url: string) => void): void {
  for (const branch of schema.anyOf ?? []) walk(branch, value, name, visit);
  if (isUrlField(schema) && typeof value === 'string') visit(name, value);
  else if (schema.properties && isPlainObject(value)) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (key in value) walk(sub, value[key], name ? `${name}.${key}` : key, visit);
    }
  } else if (schema.items && Array.isArray(value)) {
    value.forEach((item, i) => walk(schema.items!, item, `${name}[${i}]`, visit));
  }
}

/** A URL a body gives, with its field's name: `image_style_references[0].url`. */
export interface UrlInput {
  readonly field: string;
  readonly url: string;
}

/** Every URL a body gives in its URL fields, in schema order. */
export function urlInputsOf(schema: object | undefined, body: unknown): UrlInput[] {
  const out: Array<{ field: string; url: string }> = [];
  if (schema) walk(schema as Schema, body, '', (field, url) => out.push({ field, url }));
  return out;
}

/**
 * The http(s) URLs a body gives, with their fields, in schema order: what a remote worker is handed
 * signed URLs for (docs/workers.md). `data:` URIs are left out: they travel inline in the request.
 */
export function httpUrlInputsOf(schema: object | undefined, body: unknown): UrlInput[] {
  return urlInputsOf(schema, body).filter((i) => /^https?:\/\//i.test(i.url));
}

/** The URL fields a schema declares, arrays written `[]`: `image_style_references[].url`. */
export function urlFieldsOf(schema: object): string[] {
  const out: string[] = [];
  const collect = (s: Schema, name: string): void => {
    for (const branch of s.anyOf ?? []) collect(branch, name);
    if (isUrlField(s)) out.push(name);
    for (const [key, sub] of Object.entries(s.properties ?? {})) collect(sub, name ? `${name}.${key}` : key);
    if (s.items) collect(s.items, `${name}[]`);
  };
  collect(schema as Schema, '');
  return out;
}

/** Why `url` is refused before anything is fetched, or null (data: URIs, names, public literals). */
function refusal(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null; // validation already judged its shape; the fetch reports anything left
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  return literalHostRefusal(parsed.hostname);
}

function refuse(field: string, why: string): never {
  throw invalid(`${field} refused: ${why}; start the server with --allow-private-urls to allow it`);
}

/**
 * Throws invalid_request for the first URL, the webhook first (named `webhook.label`, as the
 * caller's transport calls it) and then the body's URLs (`urlInputsOf` of a body that passed
 * validation), whose host is refused without resolving it. URLs in `exempt` (this server's own
 * assets, read from its store and never fetched) are not judged.
 */
export function refusePrivateUrls(
  inputs: readonly UrlInput[],
  webhook: { readonly label: string; readonly url: string } | null,
  exempt: ReadonlySet<string> = new Set(),
): void {
  if (webhook !== null) {
    const why = refusal(webhook.url);
    if (why) refuse(webhook.label, why);
  }
  for (const { field, url } of inputs) {
    if (exempt.has(url)) continue;
    const why = refusal(url);
    if (why) refuse(field, why);
  }
}
