import { createHash, randomBytes, randomUUID } from 'node:crypto';

export function newId(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return UUID_RE.test(text);
}

/** API tokens: a recognisable prefix (so secret scanners can find leaks) and 256 random bits. */
export const TOKEN_PREFIX = 'mg_';

/** Worker tokens (docs/workers.md) look different, so a leak's scanner and a reader tell them apart. */
export const WORKER_TOKEN_PREFIX = 'mgw_';

export function newToken(prefix: string = TOKEN_PREFIX): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** Tokens are stored only as this digest; a fast hash is right for 256-bit random secrets. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
