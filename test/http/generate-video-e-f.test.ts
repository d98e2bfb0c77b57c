import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E1, F, MINIMAL, accept, bad, invalid, ok, openGen, runCase, valid } from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** Spec 4.2, POST /generate/video/vendor-e/model-e-1 and vendor-f/model-f, row by row. */

const E_CASES: FieldCase[] = [
  // prompt: required string
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 1 }, 'prompt'),
  bad('prompt as an array', { prompt: ['a'] }, 'prompt'),
  // start_image, end_image: URI (not nullable)
  ...(['start_image', 'end_image'] as const).flatMap((f) => [
    ok(`${f} URI`, { [f]: 'https://example.com/frame.png' }),
    ok(`${f} data URI`, { [f]: 'data:image/png;base64,iVBORw0KGgo=' }),
    bad(`${f} that is not a URI`, { [f]: 'frame.png' }, f),
    bad(`${f} null`, { [f]: null }, f),
    bad(`${f} as a number`, { [f]: 1 }, f),
  ]),
  // aspect_ratio: 16:9 | 9:16 | 1:1
  ...['16:9', '9:16', '1:1'].map((r) => ok(`aspect_ratio ${r}`, { aspect_ratio: r })),
  bad('aspect_ratio 21:9', { aspect_ratio: '21:9' }, 'aspect_ratio'),
  bad('aspect_ratio as a number', { aspect_ratio: 16 }, 'aspect_ratio'),
  // duration: default 5; 5 and 10 seconds
  ok('duration 5', { duration: 5 }),
  ok('duration 10', { duration: 10 }),
  ...[4, 6, 8, 7, 0, 15, 5.5].map((d) => bad(`duration ${d}`, { duration: d }, 'duration')),
  bad('duration as the string "5"', { duration: '5' }, 'duration'),
  bad('duration null', { duration: null }, 'duration'),
  // camera_control: object (fields not shown)
  ok('camera_control empty object', { camera_control: {} }),
  ok('camera_control with any fields', { camera_control: { type: 'simple', config: { pan: 5 } } }),
  bad('camera_control as a string', { camera_control: 'pan-left' }, 'camera_control'),
  bad('camera_control as an array', { camera_control: [] }, 'camera_control'),
  bad('camera_control null', { camera_control: null }, 'camera_control'),
  // mode: std | pro
  ok('mode std', { mode: 'std' }),
  ok('mode pro', { mode: 'pro' }),
  bad('mode max', { mode: 'max' }, 'mode'),
  bad('mode as a boolean', { mode: true }, 'mode'),
];

const F_CASES: FieldCase[] = [
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 1 }, 'prompt'),
  bad('prompt null', { prompt: null }, 'prompt'),
  ok('start_image URI', { start_image: 'https://example.com/start.png' }),
  bad('start_image that is not a URI', { start_image: 'start.png' }, 'start_image'),
  bad('start_image null', { start_image: null }, 'start_image'),
  ok('expand_prompt true', { expand_prompt: true }),
  ok('expand_prompt false', { expand_prompt: false }),
  bad('expand_prompt as the number 0', { expand_prompt: 0 }, 'expand_prompt'),
  bad('expand_prompt as the string "false"', { expand_prompt: 'false' }, 'expand_prompt'),
  bad('expand_prompt null', { expand_prompt: null }, 'expand_prompt'),
];

describe('POST /generate/video/vendor-e/model-e-1 request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(E_CASES))('accepts $name', (c) => runCase(g, E1, c));
  it.each(invalid(E_CASES))('refuses $name with 400 naming $field', (c) => runCase(g, E1, c));

  it('stores every default with a minimal body: aspect_ratio 16:9, duration 5, mode std', async () => {
    const { stored } = await accept(g, E1, MINIMAL[E1]);
    expect(stored.request).toEqual({ ...MINIMAL[E1], aspect_ratio: '16:9', duration: 5, mode: 'std' });
  });

  it('keeps explicit values instead of the defaults', async () => {
    const explicit = { aspect_ratio: '9:16', duration: 10, mode: 'pro', camera_control: { pan: 1 } };
    const { stored } = await accept(g, E1, { ...MINIMAL[E1], ...explicit });
    expect(stored.request).toEqual({ ...MINIMAL[E1], ...explicit });
  });
});

describe('POST /generate/video/vendor-f/model-f request body', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(F_CASES))('accepts $name', (c) => runCase(g, F, c));
  it.each(invalid(F_CASES))('refuses $name with 400 naming $field', (c) => runCase(g, F, c));

  it('stores the default expand_prompt true with a minimal body', async () => {
    const { stored } = await accept(g, F, MINIMAL[F]);
    expect(stored.request).toEqual({ ...MINIMAL[F], expand_prompt: true });
  });

  it('keeps an explicit expand_prompt false', async () => {
    const { stored } = await accept(g, F, { ...MINIMAL[F], expand_prompt: false });
    expect(stored.request).toEqual({ ...MINIMAL[F], expand_prompt: false });
  });
});
