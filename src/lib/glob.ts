/**
 * Model path patterns (the config's `model_engines`, worker tokens' `models`): `*` matches any run
 * of characters, `/` included, so `video/*` matches every path under `video/` and `*` every path.
 * Every other character matches itself.
 */

export const isGlob = (text: string): boolean => text.includes('*');

/** The anchored regular expression of a pattern. */
export function globRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`);
}

export const matchesGlob = (pattern: string, text: string): boolean => globRegExp(pattern).test(text);

/** How specific a pattern is: its characters other than `*`. Among patterns matching a path, the most specific wins. */
export const globSpecificity = (pattern: string): number => pattern.replaceAll('*', '').length;
