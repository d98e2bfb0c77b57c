import { describe, expect, it } from 'vitest';
import { globSpecificity, isGlob, isGlobPattern, matchesGlob } from '../../src/lib/glob.js';
import { checkPatterns, matchesModel, scopeCovers } from '../../src/services/remote/remote-tokens.js';

/** The one pattern dialect (src/lib/glob.ts): model_engines, worker tokens, claims and presence use it. */
describe('model path patterns: one linear-time matcher', () => {
  it('* is any run (/ and the empty run included), ? exactly one character, the rest itself', () => {
    const cases: [string, string, boolean][] = [
      ['video/*', 'video/vendor-c/model-c', true],
      ['video/*', 'video/', true],
      ['video/*', 'image/video/x', false],
      ['*', '', true],
      ['*', 'anything/at/all', true],
      ['', '', true],
      ['', 'a', false],
      ['a?c', 'abc', true],
      ['a?c', 'ac', false],
      ['a?c', 'abbc', false],
      ['?', '', false],
      ['*?', '', false],
      ['*?', 'x', true],
      ['a*b*c', 'aXXbYYc', true],
      ['a*b*c', 'aXXbYY', false],
      ['*-fast', 'video/vendor-d/model-d-fast', true],
      ['*ab', 'aab', true],
      ['a*a', 'a', false],
      ['**a**', 'bab', true],
      ['image/vendor.a/*', 'image/vendor-a/model-a-2', false],
      ['*/model-?-?', 'image/vendor-b/model-b-1', true],
    ];
    for (const [pattern, text, expected] of cases) expect(matchesGlob(pattern, text), `${pattern} ~ ${text}`).toBe(expected);
  });

  it('a pathological pattern (a run of stars before a character the text lacks) answers, not hangs', () => {
    // With a backtracking RegExp each star multiplied the work (11 stars took over a minute).
    const text = 'image/vendor-a/model-a-2/medium-'.repeat(6);
    expect(matchesGlob(`${'*'.repeat(60)}x`, text)).toBe(false);
    expect(matchesGlob(`${'*a'.repeat(100)}x`, 'a'.repeat(200))).toBe(false);
    expect(matchesGlob(`${'*?'.repeat(100)}`, 'b'.repeat(200))).toBe(true);
    expect(matchesModel([`${'*'.repeat(199)}x`], text)).toBe(false);
  });

  it('what a pattern is, in every place', () => {
    expect(isGlob('video/*')).toBe(true);
    expect(isGlob('video/model-?')).toBe(true);
    expect(isGlob('video/model')).toBe(false);
    expect(isGlobPattern('a.b_c-d/e?*')).toBe(true);
    for (const bad of ['', 'x'.repeat(201), 'a b', 'a[b]', 'a+b']) expect(isGlobPattern(bad), bad).toBe(false);
    expect(globSpecificity('video/*')).toBe(6);
    expect(globSpecificity('video/??')).toBe(8);
    expect(checkPatterns(['a?', 'b*'], 'models')).toEqual(['a?', 'b*']);
    expect(scopeCovers({ tokenModels: ['*'.repeat(150)], models: ['image/*-?'], pool: null }, 'image/vendor-b/model-b-1', 'gpu')).toBe(true);
  });
});
