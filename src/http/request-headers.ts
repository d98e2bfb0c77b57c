import { HTTP_URI_PATTERN, isHttpUri } from '../lib/urls.js';
import { invalid } from '../services/errors.js';
import type { CatalogEntry } from '../services/catalog/catalog.js';

export const WEBHOOK_URL_MAX = 2048;

/**
 * Every value of a header as sent (`rawHeaders` alternates names and values). Node's `headers`
 * object keeps only the first of some repeated headers and joins others with ", ", so a repeat
 * would otherwise be silently dropped or misread.
 */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  }
  return values;
}

function one(rawHeaders: readonly string[], name: string, display: string): string | undefined {
  const values = headerValues(rawHeaders, name);
  if (values.length > 1) throw invalid(`send the ${display} header at most once`);
  return values[0];
}

/** X-Webhook-URL's shape: an RFC 3986 http(s) URI (src/lib/urls.ts). */
export const WEBHOOK_URL_PATTERN = HTTP_URI_PATTERN;

/** X-Webhook-URL: an absolute http(s) URL of at most 2048 characters, or absent. */
export function webhookUrlFrom(rawHeaders: readonly string[]): string | null {
  const raw = one(rawHeaders, 'x-webhook-url', 'X-Webhook-URL');
  if (raw === undefined) return null;
  if (raw.length > WEBHOOK_URL_MAX) throw invalid(`X-Webhook-URL must be at most ${WEBHOOK_URL_MAX} characters`);
  if (!isHttpUri(raw)) throw invalid('X-Webhook-URL must be an absolute http or https URL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('X-Webhook-URL must be an absolute http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw invalid('X-Webhook-URL must be an absolute http or https URL');
  }
  return raw;
}

/** X-Api-Zero-Data-Retention: only `1`, and only on models that offer it (model-a-2). */
export function zeroDataRetentionFrom(rawHeaders: readonly string[], model: CatalogEntry): boolean {
  const raw = one(rawHeaders, 'x-api-zero-data-retention', 'X-Api-Zero-Data-Retention');
  if (raw === undefined) return false;
  if (!model.zeroDataRetention) throw invalid(`X-Api-Zero-Data-Retention is not supported by ${model.path}`);
  if (raw !== '1') throw invalid(`X-Api-Zero-Data-Retention must be 1, got '${raw}'`);
  return true;
}

export const IDEMPOTENCY_KEY_MAX = 255;

/** An sf-string (RFC 8941), the form the IETF draft gives the key: `"..."` with `\` escapes. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/;

/**
 * Idempotency-Key: 1 to 255 printable ASCII characters, sent bare (as Stripe takes it) or as the
 * IETF draft's quoted string (whose quotes and escapes are not part of the key); or absent.
 */
export function idempotencyKeyFrom(rawHeaders: readonly string[]): string | null {
  const raw = one(rawHeaders, 'idempotency-key', 'Idempotency-Key');
  if (raw === undefined) return null;
  const quoted = SF_STRING.exec(raw);
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : raw;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x20-\x7E]+$/.test(key)) {
    throw invalid(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters`);
  }
  return key;
}
