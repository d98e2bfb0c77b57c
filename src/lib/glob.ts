/**
 * Model path patterns, one dialect for every place that takes them (the config's `model_engines`,
 * worker tokens' and claims' `models`, the presence rows /readyz reads): `*` matches any run of
 * characters, `/` included, so `video/*` matches every path under `video/` and `*` every path; `?`
 * matches exactly one character; every other character matches itself.
 *
 * Matching is a two-pointer scan with a single backtrack point (the last `*` seen), so it takes at
 * most pattern length × text length steps whatever the pattern: never a backtracking RegExp, which
 * a pattern such as `*********x` (sent by any worker in a claim) makes exponential.
 */

/** A pattern is 1 to this many characters. */
export const GLOB_MAX_LENGTH = 200;
const GLOB_RE = /^[A-Za-z0-9._/*?-]+$/;

/** What a pattern may be, for refusals: "1 to 200 of ...". */
export const GLOB_SYNTAX = `1 to ${GLOB_MAX_LENGTH} of A-Z, a-z, 0-9, ., _, /, - and the wildcards * (any characters) and ? (one character)`;

/** Whether `text` uses a wildcard (a plain model path does not). */
export const isGlob = (text: string): boolean => text.includes('*') || text.includes('?');

/** Whether `text` is a well-formed pattern (a plain path is one too). */
export const isGlobPattern = (text: string): boolean => text.length > 0 && text.length <= GLOB_MAX_LENGTH && GLOB_RE.test(text);

/** Whether `pattern` matches the whole of `text`. */
export function matchesGlob(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  // The last `*` seen (-1: none yet) and the text position it was tried at.
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      // A run of stars is one star.
      while (pattern[p] === '*') p++;
      star = p;
      mark = t;
    } else if (c !== undefined && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (star >= 0) {
      // Let the last star take one more character and try the rest again from there.
      p = star;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * How specific a pattern is: its characters other than `*` (a `?` counts: it fixes a length).
 * Among patterns matching a path, the most specific wins.
 */
export const globSpecificity = (pattern: string): number => pattern.replaceAll('*', '').length;
