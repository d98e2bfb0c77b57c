/**
 * The candidate nearest to `word` by edit distance (insertions, deletions, substitutions), when it
 * is near enough to be a slip of the keyboard: within a third of the word's length, at most
 * `maxDistance`. Undefined when nothing is that near. For "did you mean" hints.
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
