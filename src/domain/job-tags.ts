import { invalid } from './error-catalogue.js';

/**
 * A job's tags (issue 40, docs/routing.md "Tags"): labels its creator puts on it (`X-Mediagen-Tags:
 * team-a,campaign-7`) to list its jobs by (`GET /jobs?tag=`) and sum their charges by
 * (`GET /usage/summary?group_by=tag`). A set: duplicates count once, and the order is code point
 * order, whatever order they came in, so two requests with the same tags are the same request.
 */
export const MAX_TAGS = 8;
export const TAG_MAX_LENGTH = 64;
/** One tag, as a regular expression's part. Lowercase only, so `Team-A` and `team-a` can never be two tags of one team. */
export const ONE_TAG = `[a-z0-9_.:-]{1,${TAG_MAX_LENGTH}}`;
export const TAG_PATTERN = `^${ONE_TAG}$`;
const TAG = new RegExp(TAG_PATTERN);

/** The rule in words, for refusals and descriptions. */
export const TAG_RULE = `1 to ${TAG_MAX_LENGTH} characters of a-z, 0-9, '_', '.', ':' and '-'`;

/** What a refusal shows of a bad tag: enough to find it, never a whole oversized value. */
const shown = (tag: string) => (tag.length > TAG_MAX_LENGTH ? `${tag.slice(0, TAG_MAX_LENGTH)}...` : tag);

/** One tag (the list's filter); `label` names it as the transport does: `query parameter 'tag'`. */
export function checkTag(tag: string, label: string): string {
  if (!TAG.test(tag)) throw invalid(`${label} must be ${TAG_RULE}, got '${shown(tag)}'`);
  return tag;
}

/**
 * A create's tags, as the caller gave them: each checked, duplicates dropped, sorted. `label` names
 * the option as the caller's transport does (HTTP: `X-Mediagen-Tags`; MCP: `tags`).
 */
export function checkTags(tags: readonly string[], label: string): string[] {
  for (const tag of tags) {
    if (tag === '') throw invalid(`${label} has an empty tag; send up to ${MAX_TAGS} comma-separated tags such as team-a,campaign-7`);
    if (!TAG.test(tag)) throw invalid(`${label}: each tag must be ${TAG_RULE}, got '${shown(tag)}'`);
  }
  // Checked ASCII by now, so the default sort (UTF-16 units) is code point order.
  const unique = [...new Set(tags)].sort();
  if (unique.length > MAX_TAGS) throw invalid(`${label} must carry at most ${MAX_TAGS} tags, got ${unique.length}`);
  return unique;
}
