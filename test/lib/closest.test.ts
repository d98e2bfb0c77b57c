import { describe, expect, it } from 'vitest';
import { closest } from '../../src/lib/closest.js';

describe('closest', () => {
  const models = ['image/vendor-a/model-a-2/medium', 'image/vendor-a/model-a-2/large', 'video/vendor-f/model-f'];

  it('names the nearest candidate for a slip of the keyboard', () => {
    expect(closest('image/vendor-a/model-a2/medium', models)).toBe('image/vendor-a/model-a-2/medium');
    expect(closest('image/vendor-a/model-a-2/larg', models)).toBe('image/vendor-a/model-a-2/large');
    expect(closest('video/vendor-f/model-g', models)).toBe('video/vendor-f/model-f');
  });

  it('names nothing when no candidate is near, or there are none', () => {
    expect(closest('audio/something/else', models)).toBeUndefined();
    expect(closest('image/vendor-a/model-a-2/medium', [])).toBeUndefined();
  });

  it('allows at most a third of the word in edits', () => {
    expect(closest('abcdef', ['abcxyz'])).toBeUndefined();
    expect(closest('abcdef', ['abcdxy'])).toBe('abcdxy');
  });
});
