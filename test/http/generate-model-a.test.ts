import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A2_PATHS,
  ASSET_URL,
  DATA_URI,
  MINIMAL,
  STYLE_1,
  STYLE_2,
  UUID,
  accept,
  bad,
  invalid,
  ok,
  openGen,
  runCase,
  times,
  urlOfLength,
  valid,
} from './generate-support.js';
import type { FieldCase, Gen } from './generate-support.js';

/** Spec 4.2, the shared request body of the three model-a-2 endpoints, row by row. */

const ref = (extra: Record<string, unknown> = {}) => ({ url: 'https://example.com/ref.png', ...extra });
const style = (extra: Record<string, unknown> = {}) => ({ id: STYLE_1, strength: 1, ...extra });
const mood = (extra: Record<string, unknown> = {}) => ({ id: UUID, ...extra });

const ASPECT_RATIOS = ['1:1', '4:3', '3:2', '16:9', '2.35:1', '4:5', '2:3', '9:16'];
const SLIDERS = ['intensity', 'complexity', 'movement'] as const;

const CASES: FieldCase[] = [
  // prompt: string, required
  bad('prompt missing', { prompt: undefined }, 'prompt'),
  bad('prompt as a number', { prompt: 5 }, 'prompt'),
  bad('prompt null', { prompt: null }, 'prompt'),
  // aspect_ratio: required enum
  ...ASPECT_RATIOS.map((r) => ok(`aspect_ratio ${r}`, { aspect_ratio: r })),
  bad('aspect_ratio missing', { aspect_ratio: undefined }, 'aspect_ratio'),
  bad('aspect_ratio 21:9 (not in the enum)', { aspect_ratio: '21:9' }, 'aspect_ratio'),
  bad('aspect_ratio as a number', { aspect_ratio: 1 }, 'aspect_ratio'),
  // resolution: required, 1K only
  ok('resolution 1K', { resolution: '1K' }),
  bad('resolution missing', { resolution: undefined }, 'resolution'),
  bad('resolution 2K', { resolution: '2K' }, 'resolution'),
  bad('resolution 1k (case matters)', { resolution: '1k' }, 'resolution'),
  // seed: number or null, optional
  ok('seed null', { seed: null }),
  ok('seed 0', { seed: 0 }),
  ok('seed 123456789', { seed: 123456789 }),
  ok('seed 1.5 (a number, not only an integer)', { seed: 1.5 }),
  bad('seed as the string "5"', { seed: '5' }, 'seed'),
  bad('seed as a boolean', { seed: true }, 'seed'),
  // styles: array of {id: string, strength: number -2..2}, both required
  ok('styles empty', { styles: [] }),
  ok('styles strength -2', { styles: [style({ strength: -2 })] }),
  ok('styles strength 2', { styles: [style({ strength: 2 })] }),
  ok('styles strength 0.5', { styles: [style({ strength: 0.5 })] }),
  ok('several styles', { styles: [style(), style({ id: STYLE_2, strength: -1 })] }),
  bad('styles strength -2.01', { styles: [style({ strength: -2.01 })] }, 'styles[0].strength'),
  bad('styles strength 2.01', { styles: [style({ strength: 2.01 })] }, 'styles[0].strength'),
  bad('styles strength 3 on the second item', { styles: [style(), style({ strength: 3 })] }, 'styles[1].strength'),
  bad('styles item without id', { styles: [{ strength: 1 }] }, 'id'),
  bad('styles item without strength', { styles: [{ id: 's' }] }, 'strength'),
  bad('styles id as a number', { styles: [style({ id: 7 })] }, 'styles[0].id'),
  bad('styles strength as the string "1"', { styles: [style({ strength: '1' })] }, 'styles[0].strength'),
  bad('styles as an object', { styles: style() }, 'styles'),
  bad('styles item as a string', { styles: ['style-1'] }, 'styles[0]'),
  // image_style_references: at most 10 of {url: URI <= 1024 chars, required; strength 0..1}
  ok('image_style_references with 10 items', { image_style_references: times(10, () => ref()) }),
  ok('image_style_references empty', { image_style_references: [] }),
  ok('image_style_references url of 1024 characters', { image_style_references: [ref({ url: urlOfLength(1024) })] }),
  ok('image_style_references url as a base64 data URI', { image_style_references: [ref({ url: DATA_URI })] }),
  ok('image_style_references url as an uploaded-asset URL', { image_style_references: [ref({ url: ASSET_URL })] }),
  ok('image_style_references strength 0', { image_style_references: [ref({ strength: 0 })] }),
  ok('image_style_references strength 1', { image_style_references: [ref({ strength: 1 })] }),
  bad('image_style_references with 11 items', { image_style_references: times(11, () => ref()) }, 'image_style_references'),
  bad('image_style_references url of 1025 characters', { image_style_references: [ref({ url: urlOfLength(1025) })] }, 'image_style_references[0].url'),
  bad('image_style_references url that is not a URI', { image_style_references: [ref({ url: 'not a url' })] }, 'image_style_references[0].url'),
  bad('image_style_references relative url', { image_style_references: [ref({ url: '/ref.png' })] }, 'image_style_references[0].url'),
  bad('image_style_references item without url', { image_style_references: [{ strength: 0.5 }] }, 'url'),
  bad('image_style_references url as a number', { image_style_references: [ref({ url: 42 })] }, 'image_style_references[0].url'),
  bad('image_style_references strength -0.01', { image_style_references: [ref({ strength: -0.01 })] }, 'image_style_references[0].strength'),
  bad('image_style_references strength 1.01', { image_style_references: [ref({ strength: 1.01 })] }, 'image_style_references[0].strength'),
  bad('image_style_references strength as the string "0.5"', { image_style_references: [ref({ strength: '0.5' })] }, 'image_style_references[0].strength'),
  bad('image_style_references as an object', { image_style_references: ref() }, 'image_style_references'),
  // creativity: enum, default low
  ...['raw', 'low', 'medium', 'high'].map((c) => ok(`creativity ${c}`, { creativity: c })),
  bad('creativity extreme', { creativity: 'extreme' }, 'creativity'),
  bad('creativity LOW (case matters)', { creativity: 'LOW' }, 'creativity'),
  bad('creativity as a number', { creativity: 1 }, 'creativity'),
  bad('creativity null', { creativity: null }, 'creativity'),
  // intensity, complexity, movement: integers -100..100
  ...SLIDERS.flatMap((s) => [
    ok(`${s} -100`, { [s]: -100 }),
    ok(`${s} 100`, { [s]: 100 }),
    ok(`${s} 0`, { [s]: 0 }),
    bad(`${s} -101`, { [s]: -101 }, s),
    bad(`${s} 101`, { [s]: 101 }, s),
    bad(`${s} 1.5 (not an integer)`, { [s]: 1.5 }, s),
    bad(`${s} 99.9 (not an integer)`, { [s]: 99.9 }, s),
    bad(`${s} as the string "5"`, { [s]: '5' }, s),
    bad(`${s} null`, { [s]: null }, s),
  ]),
  // moodboards: at most 1 of {id: uuid, required; strength 0..1}
  ok('moodboards with 1 item', { moodboards: [mood()] }),
  ok('moodboards empty', { moodboards: [] }),
  ok('moodboards strength 0', { moodboards: [mood({ strength: 0 })] }),
  ok('moodboards strength 1', { moodboards: [mood({ strength: 1 })] }),
  bad('moodboards with 2 items', { moodboards: [mood(), mood()] }, 'moodboards'),
  bad('moodboards item without id', { moodboards: [{ strength: 0.5 }] }, 'id'),
  bad('moodboards id that is not a uuid', { moodboards: [mood({ id: 'moodboard-1' })] }, 'moodboards[0].id'),
  bad('moodboards id as a number', { moodboards: [mood({ id: 1 })] }, 'moodboards[0].id'),
  bad('moodboards strength -0.01', { moodboards: [mood({ strength: -0.01 })] }, 'moodboards[0].strength'),
  bad('moodboards strength 1.01', { moodboards: [mood({ strength: 1.01 })] }, 'moodboards[0].strength'),
  bad('moodboards strength as a string', { moodboards: [mood({ strength: '1' })] }, 'moodboards[0].strength'),
  // image_url: URI <= 1024 characters or null
  ok('image_url null', { image_url: null }),
  ok('image_url of 1024 characters', { image_url: urlOfLength(1024) }),
  ok('image_url as a base64 data URI', { image_url: DATA_URI }),
  ok('image_url as an uploaded-asset URL', { image_url: ASSET_URL }),
  bad('image_url of 1025 characters', { image_url: urlOfLength(1025) }, 'image_url'),
  bad('image_url that is not a URI', { image_url: 'garbage' }, 'image_url'),
  bad('image_url as a number', { image_url: 5 }, 'image_url'),
  // strength: number 0..1
  ok('strength 0', { strength: 0 }),
  ok('strength 1', { strength: 1 }),
  ok('strength 0.5 with image_url', { strength: 0.5, image_url: 'https://example.com/in.png' }),
  bad('strength -0.01', { strength: -0.01 }, 'strength'),
  bad('strength 1.01', { strength: 1.01 }, 'strength'),
  bad('strength as the string "0.5"', { strength: '0.5' }, 'strength'),
  bad('strength as a boolean', { strength: true }, 'strength'),
];

describe.each(A2_PATHS)('POST /generate/%s request body', (path) => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(valid(CASES))('accepts $name', (c) => runCase(g, path, c));
  it.each(invalid(CASES))('refuses $name with 400 naming $field', (c) => runCase(g, path, c));

  it('stores every default of the table with a minimal body', async () => {
    const { stored } = await accept(g, path, MINIMAL[path]);
    expect(stored.request).toEqual({
      ...MINIMAL[path],
      // No seed sent: a random one is drawn and recorded (docs/engine.md).
      seed: expect.any(Number),
      creativity: 'low',
      intensity: 0,
      complexity: 0,
      movement: 0,
      strength: 0.99,
    });
    expect(stored.type).toBe(path);
  });

  it('stores the default strength of style references (0.5) and moodboards (0.23) per item', async () => {
    const { stored } = await accept(g, path, {
      ...MINIMAL[path],
      image_style_references: [ref(), ref({ url: DATA_URI, strength: 0.8 })],
      moodboards: [mood()],
    });
    expect(stored.request.image_style_references).toEqual([
      { url: 'https://example.com/ref.png', strength: 0.5 },
      { url: DATA_URI, strength: 0.8 },
    ]);
    expect(stored.request.moodboards).toEqual([{ id: UUID, strength: 0.23 }]);
  });

  it('keeps explicit values instead of the defaults', async () => {
    const explicit = { creativity: 'raw', intensity: -100, complexity: 100, movement: 7, strength: 0 };
    const { stored } = await accept(g, path, { ...MINIMAL[path], ...explicit });
    expect(stored.request).toMatchObject(explicit);
  });

  it('stores no default for optional fields that have none (styles, image_url), and a drawn seed', async () => {
    const { stored } = await accept(g, path, MINIMAL[path]);
    expect(stored.request.seed).toEqual(expect.any(Number));
    for (const k of ['styles', 'image_style_references', 'moodboards', 'image_url']) {
      expect(stored.request).not.toHaveProperty(k);
    }
  });
});
