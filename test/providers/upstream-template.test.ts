import { describe, expect, it } from 'vitest';
import { fillTemplate, readOutputPaths } from '../../src/engines/upstream/upstream-template.js';

describe('upstream templates', () => {
  const request = { prompt: 'a red fox', width: 1024, steps: 28, seed: null, loras: [{ id: 'x', scale: 0.5 }], size: { w: 3 } };

  it('puts a whole "{{field}}" in with its type kept and leaves out a field the request does not have', () => {
    const input = fillTemplate({ prompt: '{{prompt}}', width: '{{width}}', seed: '{{seed}}', loras: '{{loras}}', guidance: '{{guidance}}', nested: { w: '{{ size.w }}' } }, request);
    expect(input).toEqual({ prompt: 'a red fox', width: 1024, seed: null, loras: [{ id: 'x', scale: 0.5 }], nested: { w: 3 } });
    expect(input).not.toHaveProperty('guidance');
  });

  it('interpolates {{field}} inside a longer string as its text, a missing one as nothing', () => {
    expect(fillTemplate({ p: 'photo of {{prompt}}, {{steps}} steps{{missing}}', l: 'l={{loras}}' }, request)).toEqual({
      p: 'photo of a red fox, 28 steps',
      l: 'l=[{"id":"x","scale":0.5}]',
    });
  });

  it('copies everything else as it is, arrays included, dropping absent whole fields from arrays', () => {
    expect(fillTemplate({ n: 1, ok: true, list: ['{{prompt}}', '{{nope}}', 3], obj: { a: null } }, request)).toEqual({ n: 1, ok: true, list: ['a red fox', 3], obj: { a: null } });
  });

  it('passes the request as it is without a template, as a copy', () => {
    const input = fillTemplate(undefined, request);
    expect(input).toEqual(request);
    expect(input.loras).not.toBe(request.loras);
  });
});

describe('output paths', () => {
  it('reads each documented answer shape', () => {
    expect(readOutputPaths({ output: 'https://r/1.png' }, ['output'])).toEqual(['https://r/1.png']);
    expect(readOutputPaths({ output: ['https://r/1.png', 'https://r/2.png'] }, ['output'])).toEqual(['https://r/1.png', 'https://r/2.png']);
    expect(readOutputPaths({ images: [{ url: 'a' }, { url: 'b' }] }, ['images[*].url'])).toEqual(['a', 'b']);
    expect(readOutputPaths({ video: { url: 'v' } }, ['images[*].url', 'video.url'])).toEqual(['v']);
    expect(readOutputPaths({ data: [{ b64_json: 'QUJD' }, { url: 'u' }] }, ['data[*].b64_json', 'data[*].url'])).toEqual(['QUJD', 'u']);
    expect(readOutputPaths({ result: { urls: ['x', 'y'] } }, ['result.urls'])).toEqual(['x', 'y']);
    expect(readOutputPaths({ images: [{ url: 'a' }, { url: 'b' }] }, ['images[1].url'])).toEqual(['b']);
  });

  it('gives nothing for absent paths, wrong shapes and values that are not non-empty strings', () => {
    expect(readOutputPaths({}, ['output', 'images[*].url'])).toEqual([]);
    expect(readOutputPaths({ output: 42 }, ['output'])).toEqual([]);
    expect(readOutputPaths({ images: { url: 'a' } }, ['images[*].url'])).toEqual([]);
    expect(readOutputPaths({ output: ['', null, 'ok'] }, ['output'])).toEqual(['ok']);
    expect(readOutputPaths(null, ['output'])).toEqual([]);
  });
});
