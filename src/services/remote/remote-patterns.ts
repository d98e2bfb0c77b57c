import { invalid } from '../../domain/error-catalogue.js';
import { GLOB_MAX_LENGTH, GLOB_SYNTAX, isGlobPattern, matchesGlob } from '../../lib/glob.js';

/**
 * Model patterns of worker tokens and claims (docs/workers.md), in the one dialect of lib/glob.ts
 * (`*` any run of characters, `/` included; `?` exactly one). No patterns at all means every model.
 */
export const PATTERN_MAX_LENGTH = GLOB_MAX_LENGTH;
/** More than this many patterns on one token is a mistake, not a need. */
export const PATTERNS_MAX = 100;

/** Whether `model` is one of the models `patterns` name (every model when there are none). */
export function matchesModel(patterns: readonly string[], model: string): boolean {
  return patterns.length === 0 || patterns.some((p) => matchesGlob(p, model));
}

/**
 * Checks patterns as given by an operator or a worker (`what` names them in the refusal) and
 * returns them without duplicates, in the order given.
 */
export function checkPatterns(patterns: readonly string[], what: string): string[] {
  if (patterns.length > PATTERNS_MAX) throw invalid(`${what}: at most ${PATTERNS_MAX} patterns`);
  for (const p of patterns) {
    if (!isGlobPattern(p)) throw invalid(`${what}: '${p.slice(0, PATTERN_MAX_LENGTH)}' is not a model pattern; a pattern is ${GLOB_SYNTAX}`);
  }
  return [...new Set(patterns)];
}

/** What a worker's claims may take: its token's patterns, its claim's patterns, its pool. */
export interface WorkerScope {
  readonly tokenModels: readonly string[];
  readonly models: readonly string[];
  /** null: every pool. */
  readonly pool: string | null;
}

/** Whether a worker of this scope could claim jobs of `model`, bound to `pool`. */
export function scopeCovers(scope: WorkerScope, model: string, pool: string): boolean {
  return (scope.pool === null || scope.pool === pool) && matchesModel(scope.tokenModels, model) && matchesModel(scope.models, model);
}
