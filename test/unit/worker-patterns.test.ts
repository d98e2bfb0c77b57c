import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { checkPatterns, matchesModel, scopeCovers } from '../../src/services/remote/remote-tokens.js';
import { PATTERNS_MAX } from '../../src/services/remote/remote-patterns.js';

const B1 = 'image/vendor-b/model-b-1';

describe('worker token model patterns', () => {
  it('no patterns match every model', () => {
    expect(matchesModel([], B1)).toBe(true);
    expect(matchesModel([], 'video/anything')).toBe(true);
  });

  it('a plain pattern matches only that model, whole', () => {
    expect(matchesModel([B1], B1)).toBe(true);
    expect(matchesModel([B1], `${B1}-x`)).toBe(false);
    expect(matchesModel([B1], `x${B1}`)).toBe(false);
    expect(matchesModel(['image/vendor-b'], B1)).toBe(false);
  });

  it('* matches any run of characters, / included, and the empty run', () => {
    expect(matchesModel(['video/*'], 'video/vendor-c/model-c')).toBe(true);
    expect(matchesModel(['video/*'], 'video/')).toBe(true);
    expect(matchesModel(['video/*'], 'image/video/x')).toBe(false);
    expect(matchesModel(['*'], B1)).toBe(true);
    expect(matchesModel(['*/model-b-1'], B1)).toBe(true);
    expect(matchesModel(['image/*/model-*'], B1)).toBe(true);
    expect(matchesModel(['image/*/model-a*'], B1)).toBe(false);
  });

  it('? matches exactly one character, and . only a dot', () => {
    expect(matchesModel(['image/vendor-b/model-b-?'], B1)).toBe(true);
    expect(matchesModel(['image/vendor-b/model-b-??'], B1)).toBe(false);
    expect(matchesModel(['a.b'], 'a.b')).toBe(true);
    expect(matchesModel(['a.b'], 'axb')).toBe(false);
  });

  it('any of several patterns may match', () => {
    expect(matchesModel(['audio/*', B1], B1)).toBe(true);
    expect(matchesModel(['audio/*', 'video/*'], B1)).toBe(false);
  });

  it('checks patterns: 1 to 200 of the allowed characters, at most 100; duplicates dropped', () => {
    expect(checkPatterns(['video/*', 'a.b_c-d/e?', 'video/*'], 'models')).toEqual(['video/*', 'a.b_c-d/e?']);
    expect(checkPatterns(['x'.repeat(200)], 'models')).toHaveLength(1);
    for (const bad of ['', 'x'.repeat(201), 'video/[ab]', 'a b', 'a+b', 'a\\b', 'ä', 'a^', '(a)', 'a$']) {
      expect(() => checkPatterns([bad], 'models')).toThrow(DomainError);
    }
    expect(() => checkPatterns(['x y'], '--models')).toThrow(/--models: 'x y' is not a model pattern/);
    expect(() => checkPatterns(Array.from({ length: PATTERNS_MAX + 1 }, (_, i) => `m${i}`), 'models')).toThrow(/at most 100 patterns/);
  });

  it('a worker covers a model when its pool (if any), its token and its claim patterns all allow it', () => {
    const scope = { tokenModels: ['image/*'], models: [], pool: null };
    expect(scopeCovers(scope, B1, 'gpu-a')).toBe(true);
    expect(scopeCovers({ ...scope, pool: 'gpu-a' }, B1, 'gpu-a')).toBe(true);
    expect(scopeCovers({ ...scope, pool: 'gpu-b' }, B1, 'gpu-a')).toBe(false);
    expect(scopeCovers({ ...scope, tokenModels: ['video/*'] }, B1, 'gpu-a')).toBe(false);
    expect(scopeCovers({ ...scope, models: ['video/*'] }, B1, 'gpu-a')).toBe(false);
    expect(scopeCovers({ ...scope, tokenModels: [], models: [B1] }, B1, 'gpu-a')).toBe(true);
  });
});
