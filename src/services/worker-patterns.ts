import { invalid } from '../domain/errors.js';

/**
 * Model glob patterns of worker tokens and claims (docs/workers.md): `*` matches any run of
 * characters, `/` included (`video/*` is every model under `video/`), `?` exactly one; anything
 * else matches itself. No patterns at all means every model.
 */
export const PATTERN_MAX_LENGTH = 200;
/** More than this many patterns on one token is a mistake, not a need. */
export const PATTERNS_MAX = 100;
const PATTERN_RE = /^[A-Za-z0-9._/*?-]+$/;

/** Compiled patterns, by text; bounded, since claims may send patterns of their own. */
const compiled = new Map<string, RegExp>();
const COMPILED_MAX = 1000;

function compile(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    // Only `.` of the allowed characters means something in a RegExp besides the two wildcards.
    const source = pattern.replace(/\./g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.');
    re = new RegExp(`^${source}$`, 's');
    if (compiled.size >= COMPILED_MAX) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether `model` is one of the models `patterns` name (every model when there are none). */
export function matchesModel(patterns: readonly string[], model: string): boolean {
  return patterns.length === 0 || patterns.some((p) => compile(p).test(model));
}

/**
 * Checks patterns as given by an operator or a worker (`what` names them in the refusal) and
 * returns them without duplicates, in the order given.
 */
export function checkPatterns(patterns: readonly string[], what: string): string[] {
  if (patterns.length > PATTERNS_MAX) throw invalid(`${what}: at most ${PATTERNS_MAX} patterns`);
  for (const p of patterns) {
    if (p.length === 0 || p.length > PATTERN_MAX_LENGTH || !PATTERN_RE.test(p)) {
      throw invalid(
        `${what}: '${p.slice(0, PATTERN_MAX_LENGTH)}' is not a model pattern; a pattern is 1 to ${PATTERN_MAX_LENGTH} ` +
          'of A-Z, a-z, 0-9, ., _, /, - and the wildcards * (any characters) and ? (one character)',
      );
    }
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
