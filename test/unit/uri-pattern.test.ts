import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HTTP_URI_PATTERN, isHttpUri } from '../../src/lib/urls.js';
import { MEDIA_URL_PATTERN } from '../../src/models/schema-kit.js';

/** The pattern before it was rewritten without a lookahead: the language the new one must keep. */
const WITH_LOOKAHEAD = new RegExp(
  "^[hH][tT][tT][pP][sS]?://(?=[^/?#])(?:[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$",
  'u',
);

/** Lookahead, lookbehind and backreferences: what RE2 (Go) and Rust's regex refuse. */
const NON_PORTABLE = /\(\?[=!<]|\\[1-9]|\\k</;

// Characters that decide the pattern's answer: URI characters, the three that may not start the
// authority, escapes good and bad, and characters outside URIs.
const PIECES = ['h', 't', 'p', 's', 'H', 'T', 'P', 'S', ':', '/', '//', '?', '#', '%', '%4', '%41', '%zz', 'a', 'Z', '9', '-', '.', '_', '~', '[', ']', '@', '!', '$', '&', "'", '(', ')', '*', '+', ',', ';', '=', ' ', '\\', '"', '<', '^', '`', '{', '|', 'é', '\n', '\t'];
const candidate = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((p) => p.join('')),
  fc.tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'hTtPs://', 'http:/', 'ftp://'), fc.array(fc.constantFrom(...PIECES), { maxLength: 10 })).map(([s, p]) => s + p.join('')),
  fc.string(),
);

describe('URL patterns carried into the OpenAPI document', () => {
  it('use no lookaround or backreference', () => {
    expect(HTTP_URI_PATTERN).not.toMatch(NON_PORTABLE);
    expect(MEDIA_URL_PATTERN).not.toMatch(NON_PORTABLE);
  });

  it('the http(s) URI pattern accepts exactly what the lookahead version accepted', () => {
    fc.assert(fc.property(candidate, (s) => isHttpUri(s) === WITH_LOOKAHEAD.test(s)), { numRuns: 20_000 });
    for (const s of ['http://a', 'https://a/b?c#d', 'http://%41', 'http://[::1]:8080/x', 'http:///a', 'http://?a', 'http://#a', 'http://', 'http://a b', 'http://%4', 'https:host']) {
      expect(isHttpUri(s), s).toBe(WITH_LOOKAHEAD.test(s));
    }
  });
});
