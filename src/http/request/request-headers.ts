import { HTTP_URI_PATTERN } from '../../lib/urls.js';
import { invalid } from '../../domain/error-catalogue.js';

/** How the generation use case's messages name its options over HTTP: by their headers. */
export const OPTION_LABELS = { webhookUrl: 'X-Webhook-URL', zeroDataRetention: 'X-Api-Zero-Data-Retention', tags: 'X-Mediagen-Tags' } as const;

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

/** X-Webhook-URL as sent, or null; the use case judges it (src/domain/webhook-url.ts). */
export function webhookUrlFrom(rawHeaders: readonly string[]): string | null {
  return one(rawHeaders, 'x-webhook-url', OPTION_LABELS.webhookUrl) ?? null;
}

/**
 * X-Mediagen-Tags as sent: comma-separated, each tag's surrounding spaces trimmed; several lines of
 * the header are one list, as HTTP joins a repeated list header. The use case judges the tags
 * (domain/job-tags.ts): an empty header or item is refused there, naming the header.
 */
export function tagsFrom(rawHeaders: readonly string[]): string[] {
  const values = headerValues(rawHeaders, 'x-mediagen-tags');
  return values.length === 0 ? [] : values.join(',').split(',').map((tag) => tag.trim());
}

/**
 * X-Api-Zero-Data-Retention: present means asked for. Only the value `1` is valid, but on a model
 * that does not offer it (`offered` false) any value is simply passed on as asked: the use case
 * then refuses it as not supported by the model, whatever was sent.
 */
export function zeroDataRetentionFrom(rawHeaders: readonly string[], offered: boolean): boolean {
  const raw = one(rawHeaders, 'x-api-zero-data-retention', OPTION_LABELS.zeroDataRetention);
  if (raw === undefined) return false;
  if (offered && raw !== '1') throw invalid(`X-Api-Zero-Data-Retention must be 1, got '${raw}'`);
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

/**
 * For a POST that cannot replay its answer (a new token's secret is never stored; a second
 * rotation cuts off the original secret): an Idempotency-Key there would promise a safety it
 * does not give, so it is refused rather than ignored. `instead` says how to learn what happened.
 */
export function refuseIdempotencyKey(rawHeaders: readonly string[], endpoint: string, instead: string): void {
  if (one(rawHeaders, 'idempotency-key', 'Idempotency-Key') !== undefined) {
    throw invalid(`${endpoint} takes no Idempotency-Key: its answer cannot be replayed; ${instead}`);
  }
}
