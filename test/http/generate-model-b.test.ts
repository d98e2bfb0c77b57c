import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { B1, MINIMAL, accept, bad, invalid, ok, openGen, runCase, times, valid } from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** Spec 4.2 and 8, POST /generate/image/vendor-b/model-b-1, row by row. */

const CASES: FieldCase[] = [
  // prompt: required, length 1..6000
  ok('prompt of 1 character', { prompt: 'x' }),
  ok('prompt of 6000 characters', { prompt: 'p'.repeat(6000) }),
  bad('prompt of 0 characters', { prompt: '' }, 'prompt'),
  bad('prompt of 6001 characters', { prompt: 'p'.repeat(6001) }, 'prompt'),
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 5 }, 'prompt'),
  bad('prompt null', { prompt: null }, 'prompt'),
  // width, height: number 512..8192
  ...(['width', 'height'] as const).flatMap((f) => [
    ok(`${f} 512`, { [f]: 512 }),
    ok(`${f} 8192`, { [f]: 8192 }),
    ok(`${f} 1000.5 (a number, not only an integer)`, { [f]: 1000.5 }),
    bad(`${f} 511`, { [f]: 511 }, f),
    bad(`${f} 511.5`, { [f]: 511.5 }, f),
    bad(`${f} 8192.5`, { [f]: 8192.5 }, f),
    bad(`${f} 8193`, { [f]: 8193 }, f),
    bad(`${f} 0`, { [f]: 0 }, f),
    bad(`${f} as the string "1024"`, { [f]: '1024' }, f),
    bad(`${f} null`, { [f]: null }, f),
  ]),
  // mode: standard | max
  ok('mode standard', { mode: 'standard' }),
  ok('mode max', { mode: 'max' }),
  bad('mode turbo', { mode: 'turbo' }, 'mode'),
  bad('mode as a number', { mode: 1 }, 'mode'),
  // style: auto | manga
  ok('style auto', { style: 'auto' }),
  ok('style manga', { style: 'manga' }),
  bad('style anime', { style: 'anime' }, 'style'),
  bad('style as a boolean', { style: true }, 'style'),
  // output_format: png | jpeg | null
  ok('output_format png', { output_format: 'png' }),
  ok('output_format jpeg', { output_format: 'jpeg' }),
  ok('output_format null', { output_format: null }),
  bad('output_format gif', { output_format: 'gif' }, 'output_format'),
  bad('output_format PNG (case matters)', { output_format: 'PNG' }, 'output_format'),
  bad('output_format as a number', { output_format: 1 }, 'output_format'),
  // style_images: array of objects, at most 9
  ok('style_images with 9 items', { style_images: times(9, (i) => ({ url: `https://example.com/${i}.png` })) }),
  ok('style_images empty', { style_images: [] }),
  ok('style_images items with any fields (their fields are not shown)', { style_images: [{ anything: 1, url: 'x' }] }),
  bad('style_images with 10 items', { style_images: times(10, () => ({})) }, 'style_images'),
  bad('style_images item as a string', { style_images: ['https://example.com/a.png'] }, 'style_images[0]'),
  bad('style_images as an object', { style_images: {} }, 'style_images'),
  // web_search: the rename target of webSearch
  ok('web_search true', { web_search: true }),
  ok('web_search false', { web_search: false }),
  bad('web_search as the string "true"', { web_search: 'true' }, 'web_search'),
];

describe('POST /generate/image/vendor-b/model-b-1 request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(CASES))('accepts $name', (c) => runCase(g, B1, c));
  it.each(invalid(CASES))('refuses $name with 400 naming $field', (c) => runCase(g, B1, c));

  it('stores every default of the table with a minimal body: width 1024, height 1024, mode standard, style auto', async () => {
    const { stored } = await accept(g, B1, MINIMAL[B1]);
    expect(stored.request).toEqual({ prompt: 'a blue bird', width: 1024, height: 1024, mode: 'standard', style: 'auto' });
    expect(stored.type).toBe(B1);
  });

  it('keeps explicit values instead of the defaults', async () => {
    const explicit = { width: 512, height: 8192, mode: 'max', style: 'manga', output_format: null };
    const { stored } = await accept(g, B1, { ...MINIMAL[B1], ...explicit });
    expect(stored.request).toEqual({ ...MINIMAL[B1], ...explicit });
  });
});
