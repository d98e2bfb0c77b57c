import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signing of webhook deliveries as Standard Webhooks (https://www.standardwebhooks.com/) defines
 * it, so receivers can verify with any of its libraries (e.g. the `standardwebhooks` npm package)
 * instead of code of ours. A secret is `whsec_` + base64 of 24 to 64 random bytes; the signature
 * is HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the decoded bytes.
 */

const PREFIX = 'whsec_';
/** The key sizes the specification allows, in bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const NEW_KEY_BYTES = 24;
// Strict base64 (standard alphabet, padded): Buffer.from(..., 'base64') skips bad characters
// silently, so the shape is checked here first.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new random secret: `whsec_` + base64 of 24 bytes (192 bits). */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(NEW_KEY_BYTES).toString('base64');
}

/** Whether `value` is a secret of the Standard Webhooks shape: `whsec_` + base64 of 24 to 64 bytes. */
export function isWebhookSecret(value: unknown): value is string {
  if (typeof value !== 'string' || !value.startsWith(PREFIX)) return false;
  const encoded = value.slice(PREFIX.length);
  if (!BASE64.test(encoded)) return false;
  const bytes = Buffer.byteLength(encoded, 'base64');
  return bytes >= MIN_KEY_BYTES && bytes <= MAX_KEY_BYTES;
}

function keyOf(secret: string): Buffer {
  // The message never contains the secret: it may end up in a log.
  if (!isWebhookSecret(secret)) throw new TypeError('not a webhook secret (expected whsec_ + base64 of 24 to 64 bytes)');
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

/**
 * The `webhook-signature` header value: one `v1,<base64 HMAC-SHA256>` per secret, separated by
 * spaces. During a secret rotation both the old and the new secret sign, so a receiver verifies
 * with whichever it holds. Throws TypeError on a malformed secret, an empty list, a bad id or a
 * timestamp that is not whole seconds.
 */
export function signWebhook(secrets: readonly string[], msgId: string, timestampSec: number, body: string): string {
  if (secrets.length === 0) throw new TypeError('signWebhook needs at least one secret');
  // Visible ASCII only, so it goes into the webhook-id header as is and reads the same there.
  if (!/^[\x21-\x7e]+$/.test(msgId)) throw new TypeError('webhook id must be non-empty visible ASCII');
  if (!Number.isSafeInteger(timestampSec) || timestampSec < 0) {
    throw new TypeError('webhook timestamp must be whole seconds since the Unix epoch');
  }
  const content = `${msgId}.${timestampSec}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', keyOf(s)).update(content, 'utf8').digest('base64')}`).join(' ');
}

export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers for one attempt. `msgId` stays the same across retries of
 * one delivery (receivers deduplicate on it); `timestampSec` must be the time of this attempt,
 * because receivers reject timestamps more than about five minutes away from their clock.
 */
export function webhookHeaders(secrets: readonly string[], msgId: string, timestampSec: number, body: string): WebhookHeaders {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signWebhook(secrets, msgId, timestampSec, body),
  };
}

/** How far a webhook's timestamp may be from our clock, as the specification's libraries allow. */
export const WEBHOOK_TOLERANCE_SEC = 5 * 60;

/**
 * Verifies a Standard Webhooks delivery (a provider's to us): the timestamp within the tolerance
 * of `nowMs`, and one of the `v1,` signatures in the header the HMAC of id, timestamp and body
 * under `secret`, compared in constant time. False for anything missing or malformed.
 */
export function verifyWebhook(secret: string, headers: Readonly<Record<string, string | undefined>>, body: string, nowMs: number): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp) || !isWebhookSecret(secret) || !/^[\x21-\x7e]+$/.test(id)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SEC) return false;
  const expected = Buffer.from(signWebhook([secret], id, Number(timestamp), body).slice('v1,'.length), 'base64');
  return signatures.split(' ').some((s) => {
    if (!s.startsWith('v1,')) return false;
    const given = Buffer.from(s.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
