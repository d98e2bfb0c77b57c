import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { L1, MINIMAL, accept, bad, invalid, ok, openGen, runCase, valid } from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** POST /generate/audio/vendor-l/model-l-1, field by field (docs/decisions.md: the body and its ranges). */

const CASES: FieldCase[] = [
  // prompt: required, 1..2000 characters
  ok('prompt of 1 character', { prompt: 'x' }),
  ok('prompt of 2000 characters', { prompt: 'p'.repeat(2000) }),
  bad('prompt of 0 characters', { prompt: '' }, 'prompt'),
  bad('prompt of 2001 characters', { prompt: 'p'.repeat(2001) }, 'prompt'),
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 5 }, 'prompt'),
  bad('prompt null', { prompt: null }, 'prompt'),
  // duration: whole seconds 1..120
  ok('duration 1', { duration: 1 }),
  ok('duration 120', { duration: 120 }),
  ok('duration 30', { duration: 30 }),
  bad('duration 0', { duration: 0 }, 'duration'),
  bad('duration 121', { duration: 121 }, 'duration'),
  bad('duration 2.5 (whole seconds only)', { duration: 2.5 }, 'duration'),
  bad('duration -5', { duration: -5 }, 'duration'),
  bad('duration as the string "10"', { duration: '10' }, 'duration'),
  bad('duration null', { duration: null }, 'duration'),
  // output_format: mp3 | wav
  ok('output_format mp3', { output_format: 'mp3' }),
  ok('output_format wav', { output_format: 'wav' }),
  bad('output_format ogg', { output_format: 'ogg' }, 'output_format'),
  bad('output_format MP3 (case matters)', { output_format: 'MP3' }, 'output_format'),
  bad('output_format mp3_44100_128 (one name per format)', { output_format: 'mp3_44100_128' }, 'output_format'),
  bad('output_format as a number', { output_format: 3 }, 'output_format'),
  // seed: integer 0..2^32-1
  ok('seed 0', { seed: 0 }),
  ok('seed 4294967295', { seed: 4_294_967_295 }),
  bad('seed -1', { seed: -1 }, 'seed'),
  bad('seed 4294967296', { seed: 4_294_967_296 }, 'seed'),
  bad('seed 1.5', { seed: 1.5 }, 'seed'),
  bad('seed as the string "7"', { seed: '7' }, 'seed'),
  // No other field.
  bad('an unknown field', { tempo: 120 }, 'tempo'),
  bad('a camelCase field (no aliases on a new model)', { outputFormat: 'wav' }, 'outputFormat'),
  bad('an image field', { image_url: 'https://example.com/a.png' }, 'image_url'),
];

describe('POST /generate/audio/vendor-l/model-l-1 request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(CASES))('accepts $name', (c) => runCase(g, L1, c));
  it.each(invalid(CASES))('refuses $name with 400 naming $field', (c) => runCase(g, L1, c));

  it('stores the defaults with a minimal body: duration 10, output_format mp3, and a drawn seed', async () => {
    const { stored } = await accept(g, L1, MINIMAL[L1]);
    expect(stored.request).toEqual({ prompt: 'rain on a tin roof', duration: 10, output_format: 'mp3', seed: expect.any(Number) });
    expect(stored.type).toBe(L1);
  });
});
