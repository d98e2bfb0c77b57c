import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C_EDIT, D_FAST, MINIMAL, accept, bad, invalid, ok, openGen, runCase, valid } from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** Spec 4.2 and 8, POST /generate/video/vendor-c/model-c-edit and vendor-d/model-d-fast, row by row. */

const RATIOS = ['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672', '848:480', '640:480'];

const C_CASES: FieldCase[] = [
  // prompt: required, at most 1000 characters
  ok('prompt of 1000 characters', { prompt: 'p'.repeat(1000) }),
  ok('prompt of 0 characters (only a maximum is given)', { prompt: '' }),
  bad('prompt of 1001 characters', { prompt: 'p'.repeat(1001) }, 'prompt'),
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 1 }, 'prompt'),
  // init_video: required URI
  ok('init_video as a data URI', { init_video: 'data:video/mp4;base64,AAAAIGZ0eXBpc29t' }),
  bad('init_video missing', { init_video: undefined }, 'init_video'),
  bad('init_video that is not a URI', { init_video: 'not a uri' }, 'init_video'),
  bad('init_video relative', { init_video: 'videos/in.mp4' }, 'init_video'),
  bad('init_video as a number', { init_video: 3 }, 'init_video'),
  bad('init_video null', { init_video: null }, 'init_video'),
  // init_image_url: optional URI
  ok('init_image_url', { init_image_url: 'https://example.com/first.png' }),
  bad('init_image_url that is not a URI', { init_image_url: 'first frame' }, 'init_image_url'),
  bad('init_image_url null', { init_image_url: null }, 'init_image_url'),
  // references: array of objects, at most 1
  ok('references with 1 item', { references: [{ url: 'https://example.com/ref.png' }] }),
  ok('references empty', { references: [] }),
  bad('references with 2 items', { references: [{}, {}] }, 'references'),
  bad('references item as a string', { references: ['https://example.com/ref.png'] }, 'references[0]'),
  bad('references as an object', { references: {} }, 'references'),
  // ratio: enum
  ...RATIOS.map((r) => ok(`ratio ${r}`, { ratio: r })),
  bad('ratio 1920:1080', { ratio: '1920:1080' }, 'ratio'),
  bad('ratio 16:9', { ratio: '16:9' }, 'ratio'),
  bad('ratio as a number', { ratio: 1280 }, 'ratio'),
  // seed: number 0..4294967295
  ok('seed 0', { seed: 0 }),
  ok('seed 4294967295', { seed: 4294967295 }),
  bad('seed -1', { seed: -1 }, 'seed'),
  bad('seed 4294967296', { seed: 4294967296 }, 'seed'),
  bad('seed as the string "5"', { seed: '5' }, 'seed'),
  bad('seed null', { seed: null }, 'seed'),
];

const D_CASES: FieldCase[] = [
  // prompt: required string
  ok('prompt of 2000 characters (no limit is given)', { prompt: 'p'.repeat(2000) }),
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 8 }, 'prompt'),
  // start_image: URI or null
  ok('start_image URI', { start_image: 'https://example.com/start.png' }),
  ok('start_image null', { start_image: null }),
  bad('start_image that is not a URI', { start_image: 'start.png' }, 'start_image'),
  bad('start_image as a number', { start_image: 1 }, 'start_image'),
  // aspect_ratio: 16:9 | 9:16 | 1:1
  ...['16:9', '9:16', '1:1'].map((r) => ok(`aspect_ratio ${r}`, { aspect_ratio: r })),
  bad('aspect_ratio 4:3', { aspect_ratio: '4:3' }, 'aspect_ratio'),
  bad('aspect_ratio null', { aspect_ratio: null }, 'aspect_ratio'),
  // duration: 4 | 6 | 8
  ...[4, 6, 8].map((d) => ok(`duration ${d}`, { duration: d })),
  ...[5, 7, 2, 10, 0, 4.5].map((d) => bad(`duration ${d}`, { duration: d }, 'duration')),
  bad('duration as the string "8"', { duration: '8' }, 'duration'),
  // generate_audio: boolean
  ok('generate_audio true', { generate_audio: true }),
  ok('generate_audio false', { generate_audio: false }),
  bad('generate_audio as the number 1', { generate_audio: 1 }, 'generate_audio'),
  bad('generate_audio as the string "true"', { generate_audio: 'true' }, 'generate_audio'),
  bad('generate_audio null', { generate_audio: null }, 'generate_audio'),
  // resolution: 720p | 1080p
  ok('resolution 720p', { resolution: '720p' }),
  ok('resolution 1080p', { resolution: '1080p' }),
  bad('resolution 4k', { resolution: '4k' }, 'resolution'),
  bad('resolution as the number 720', { resolution: 720 }, 'resolution'),
];

describe('POST /generate/video/vendor-c/model-c-edit request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(C_CASES))('accepts $name', (c) => runCase(g, C_EDIT, c));
  it.each(invalid(C_CASES))('refuses $name with 400 naming $field', (c) => runCase(g, C_EDIT, c));

  it('stores the default ratio 1280:720 with a minimal body', async () => {
    const { stored } = await accept(g, C_EDIT, MINIMAL[C_EDIT]);
    expect(stored.request).toEqual({ ...MINIMAL[C_EDIT], ratio: '1280:720', seed: expect.any(Number) });
  });

  it('keeps an explicit ratio and seed', async () => {
    const { stored } = await accept(g, C_EDIT, { ...MINIMAL[C_EDIT], ratio: '640:480', seed: 42 });
    expect(stored.request).toEqual({ ...MINIMAL[C_EDIT], ratio: '640:480', seed: 42 });
  });
});

describe('POST /generate/video/vendor-d/model-d-fast request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(D_CASES))('accepts $name', (c) => runCase(g, D_FAST, c));
  it.each(invalid(D_CASES))('refuses $name with 400 naming $field', (c) => runCase(g, D_FAST, c));

  it('stores every default with a minimal body: aspect_ratio 16:9, duration 8, generate_audio false, resolution 720p', async () => {
    const { stored } = await accept(g, D_FAST, MINIMAL[D_FAST]);
    expect(stored.request).toEqual({
      ...MINIMAL[D_FAST],
      aspect_ratio: '16:9',
      duration: 8,
      generate_audio: false,
      resolution: '720p',
    });
  });

  it('keeps explicit values instead of the defaults', async () => {
    const explicit = { aspect_ratio: '1:1', duration: 4, generate_audio: true, resolution: '1080p', start_image: null };
    const { stored } = await accept(g, D_FAST, { ...MINIMAL[D_FAST], ...explicit });
    expect(stored.request).toEqual({ ...MINIMAL[D_FAST], ...explicit });
  });
});
