/**
 * Resolves `ref` against a base URL that may carry a path prefix (https://host/api): the base is
 * treated as a directory, so `deprecations` becomes https://host/api/deprecations. Absolute refs
 * are returned as they are.
 */
export function resolveUrl(ref: string, base: string): string {
  return new URL(ref, base.endsWith('/') ? base : `${base}/`).toString();
}
