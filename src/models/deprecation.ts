import { DomainError } from '../domain/error-catalogue.js';
import { resolveUrl } from '../lib/urls.js';

export interface Deprecation {
  /** YYYY-MM-DD. The model is unavailable (HTTP 410) from 00:00:00 UTC of this date. */
  readonly sunsetDate: string;
  readonly sunsetMs: number;
  readonly replacement?: string;
  /** Absolute, or relative to the server's public URL (resolved with lib/urls.ts). */
  readonly migrationUrl: string;
}

/** Sunset takes effect at the first instant of the sunset date. */
export function isSunset(dep: Deprecation, nowMs: number): boolean {
  return nowMs >= dep.sunsetMs;
}

/** The refusal whose fields are the 410 body of spec section 7; replacement and migration_url only when a replacement exists. */
export function sunsetError(path: string, dep: Deprecation, publicUrl: string): DomainError {
  const message = dep.replacement
    ? `${path} was retired on ${dep.sunsetDate}; use ${dep.replacement} instead`
    : `${path} was retired on ${dep.sunsetDate} and has no replacement`;
  return new DomainError('model_unavailable', 'model_unavailable', {
    fields: {
      reason: 'deprecated',
      message,
      sunset_date: dep.sunsetDate,
      ...(dep.replacement ? { replacement: dep.replacement, migration_url: resolveUrl(dep.migrationUrl, publicUrl) } : {}),
    },
  });
}
