/**
 * fal's webhook signatures (ED25519), checked as fal's documentation describes
 * (https://docs.fal.ai/model-apis/model-endpoints/webhooks, "Verifying Your Webhook"):
 * - headers `X-Fal-Webhook-Request-Id`, `X-Fal-Webhook-User-Id`, `X-Fal-Webhook-Timestamp`
 *   (Unix seconds) and `X-Fal-Webhook-Signature` (hex);
 * - the timestamp within ±5 minutes of now;
 * - the signed message: request id, user id, timestamp and the hex SHA-256 of the raw body,
 *   joined by newlines;
 * - the public keys: the JWKS at https://rest.alpha.fal.ai/.well-known/jwks.json (OKP / Ed25519,
 *   base64url `x`), which fal's example caches for 24 hours; any key verifying is enough. It stays
 *   where fal's webhook documentation publishes it, though fal's clients moved storage to rest.fal.ai.
 * The JWKS is fetched without our key (it is public) and cached per URL.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { providerType } from '../../config/provider-types.js';

/** Where fal publishes its webhook signing keys (ProviderSettings.webhookJwksUrl overrides it). */
export const FAL_DEFAULT_JWKS_URL = providerType('fal').extraUrls.webhook_jwks_url!.default;
/** How far a webhook's timestamp may be from now (fal's example: 300 s). */
export const FAL_WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;
/** How long fetched keys are kept (fal's example: 24 h). */
export const FAL_JWKS_TTL_MS = 24 * 60 * 60 * 1000;
/** A signature that no cached key verifies refetches the keys (a rotation), at most this often per URL. */
const JWKS_REFRESH_MIN_MS = 60 * 1000;
const JWKS_MAX_BYTES = 64 * 1024;

interface CachedKeys {
  readonly keys: readonly KeyObject[];
  readonly fetchedAtMs: number;
}
const cache = new Map<string, CachedKeys>();

/** Forgets every cached JWKS (tests). */
export function clearFalJwksCache(): void {
  cache.clear();
}

function header(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower && typeof v === 'string') return v.trim();
  return undefined;
}

/** The Ed25519 public keys of a JWKS body; other kinds of key are skipped. */
export function falJwksKeys(body: unknown): KeyObject[] {
  const list = body && typeof body === 'object' ? (body as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list)) return [];
  const keys: KeyObject[] = [];
  for (const jwk of list) {
    if (!jwk || typeof jwk !== 'object') continue;
    const { kty, crv, x } = jwk as Record<string, unknown>;
    if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string') continue;
    try {
      keys.push(createPublicKey({ key: { kty, crv, x }, format: 'jwk' }));
    } catch {
      // a key that does not parse cannot verify anything
    }
  }
  return keys;
}

async function fetchKeys(url: string, timeoutMs: number): Promise<KeyObject[] | undefined> {
  try {
    const res = await fetch(url, { headers: { accept: 'application/json', 'user-agent': 'mediagen' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    const text = await res.text();
    if (!res.ok || text.length > JWKS_MAX_BYTES) return undefined;
    return falJwksKeys(JSON.parse(text));
  } catch {
    return undefined;
  }
}

async function keysFor(url: string, nowMs: number, timeoutMs: number, refresh: boolean): Promise<readonly KeyObject[]> {
  const cached = cache.get(url);
  const fresh = cached && nowMs - cached.fetchedAtMs < FAL_JWKS_TTL_MS && nowMs >= cached.fetchedAtMs;
  if (cached && fresh && !(refresh && nowMs - cached.fetchedAtMs >= JWKS_REFRESH_MIN_MS)) return cached.keys;
  const keys = await fetchKeys(url, timeoutMs);
  if (keys === undefined || keys.length === 0) return cached?.keys ?? [];
  cache.set(url, { keys, fetchedAtMs: nowMs });
  return keys;
}

/**
 * The fal request id a webhook is about, when its signature, timestamp and body check out;
 * undefined otherwise (including when the JWKS cannot be fetched: fal retries its deliveries,
 * and polling is the backstop).
 */
export async function verifyFalWebhook(
  headers: Readonly<Record<string, string | undefined>>,
  rawBody: Buffer,
  nowMs: number,
  jwksUrl: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const requestId = header(headers, 'x-fal-webhook-request-id');
  const userId = header(headers, 'x-fal-webhook-user-id');
  const timestamp = header(headers, 'x-fal-webhook-timestamp');
  const signatureHex = header(headers, 'x-fal-webhook-signature');
  if (!requestId || !userId || !timestamp || !signatureHex) return undefined;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs - Number(timestamp) * 1000) > FAL_WEBHOOK_TOLERANCE_MS) return undefined;
  if (!/^[0-9a-f]{128}$/i.test(signatureHex)) return undefined;
  const signature = Buffer.from(signatureHex, 'hex');
  const message = Buffer.from([requestId, userId, timestamp, createHash('sha256').update(rawBody).digest('hex')].join('\n'), 'utf8');
  const check = (keys: readonly KeyObject[]) => keys.some((key) => {
    try {
      return verify(null, message, key, signature);
    } catch {
      return false;
    }
  });
  if (check(await keysFor(jwksUrl, nowMs, timeoutMs, false))) return requestId;
  // fal may have rotated its keys since they were cached.
  if (check(await keysFor(jwksUrl, nowMs, timeoutMs, true))) return requestId;
  return undefined;
}
