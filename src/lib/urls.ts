/**
 * Resolves `ref` against a base URL that may carry a path prefix (https://host/api): the base is
 * treated as a directory, so `deprecations` becomes https://host/api/deprecations. Absolute refs
 * are returned as they are.
 */
export function resolveUrl(ref: string, base: string): string {
  return new URL(ref, base.endsWith('/') ? base : `${base}/`).toString();
}

/**
 * A URL as the store keeps it, as a client reads it: a stored output's or upload's URL is kept as
 * a path on this server (`/outputs/<key>/<name>`), so that rows written by a worker on another
 * machine, or before the public URL changed, show at this server's public URL, path prefix
 * included (https://host/api/outputs/...). Any other URL (an external one, a data: URI) is shown
 * as given.
 */
export function storedUrlAt(stored: string, publicUrl: string): string {
  return stored.startsWith('/') ? resolveUrl(stored.replace(/^\/+/, ''), publicUrl) : stored;
}

/**
 * An http(s) URI as RFC 3986 writes it: the scheme, `//` and an authority, then only URI
 * characters with well-formed percent-escapes. WHATWG URL parsing alone is too lenient for a
 * value that is stored and later called or shown as is: it reads `https:host`, `http:\\host\\path`
 * and unescaped spaces as URLs. A string, so that JSON Schema (OpenAPI) can carry it too; hence
 * no lookahead, which validators outside JavaScript (Go's RE2, Rust's regex) refuse: the first
 * character after `//` is a URI character other than `/`, `?` and `#`, then any URI characters.
 */
const URI_CHAR = "[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2}";
const AUTHORITY_START = "[A-Za-z0-9\\-._~:\\[\\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2}";
export const HTTP_URI_PATTERN = `^[hH][tT][tT][pP][sS]?://(?:${AUTHORITY_START})(?:${URI_CHAR})*$`;

const HTTP_URI_RE = new RegExp(HTTP_URI_PATTERN, 'u');

/** An http(s) URI (the pattern above) that also parses with a host: what an output or webhook URL must be. */
export function isAbsoluteHttpUrl(value: string): boolean {
  if (!isHttpUri(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

export function isHttpUri(value: string): boolean {
  return HTTP_URI_RE.test(value);
}
