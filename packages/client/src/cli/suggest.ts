import { MediagenError } from '../index.js';
import type { Mediagen } from '../index.js';
import { Refusal } from './exit.js';

/**
 * The candidate nearest to `word` by edit distance (insertions, deletions, substitutions), when it
 * is near enough to be a slip of the keyboard: within a third of the word's length, at most
 * `maxDistance`. The server's 404 hint uses the same rule (src/lib/closest.ts), which this package
 * cannot import; test/client/cli-suggest.test.ts holds the two to the same answers.
 */
export function closest(word: string, candidates: Iterable<string>, maxDistance = 8): string | undefined {
  const limit = Math.min(maxDistance, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - word.length) >= bestDistance) continue;
    const d = distance(word, candidate, bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, given up (returning `cap`) once every path is at least `cap`. */
function distance(a: string, b: string, cap: number): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let low = i;
    for (let j = 1; j <= b.length; j++) {
      const d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(d);
      low = Math.min(low, d);
    }
    if (low >= cap) return cap;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * A 404 for `model` (POST /generate/MODEL or GET /models/MODEL) as the command line tells it: the
 * model is unknown, and the nearest model id of GET /models when one is a slip away, as the
 * command to run instead. `retry` is the command with `{}` for the model. Anything else (another
 * status, a model the catalog has after all, a catalog that cannot be read) is `err` unchanged.
 */
export async function unknownModel(err: unknown, client: Mediagen, model: string, retry: string): Promise<unknown> {
  if (!(err instanceof MediagenError) || err.status !== 404) return err;
  let ids: string[];
  try {
    ids = (await client.models.list()).filter((m) => m.available).map((m) => m.id);
  } catch {
    return err;
  }
  if (ids.includes(model)) return err;
  const near = closest(model, ids);
  const id = err.requestId ? `, request ${err.requestId}` : '';
  const hint = near !== undefined ? `; did you mean '${retry.replace('{}', near)}'?` : "; 'mediagen models' lists them";
  return new Refusal(`unknown model '${model}'${hint} (HTTP 404${id})`);
}
