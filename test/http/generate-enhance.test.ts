import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPriceTable } from '../../src/models/prices.js';
import { generate, get } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import type { Json } from '../helpers/app.js';
import { ASSET_URL, DATA_URI, accept, openGen, reject, urlOfLength } from './generate-support.js';
import type { Gen } from './generate-support.js';

/** POST /generate/enhance/vendor-j/standard-enhance and generative-enhance: bodies, cap, prices. */

const STANDARD = 'enhance/vendor-j/standard-enhance';
const GENERATIVE = 'enhance/vendor-j/generative-enhance';

const MIN_STANDARD: Json = { image_url: 'https://example.com/in.jpg', width: 2048, height: 1536, model: 'Standard V2' };
const MIN_GENERATIVE: Json = { ...MIN_STANDARD, model: 'Redefine' };

type Case = readonly [name: string, patch: Json, field?: string];

/** Rows both bodies share (their own `model` rows come separately). */
const SHARED: Case[] = [
  ['image_url as a data: URI', { image_url: DATA_URI }],
  ["image_url as an asset's URL", { image_url: ASSET_URL }],
  ['image_url of 1024 characters', { image_url: urlOfLength(1024) }],
  ['image_url of 1025 characters', { image_url: urlOfLength(1025) }, 'image_url'],
  ['image_url missing', { image_url: undefined }, 'image_url'],
  ['image_url as a file: URL', { image_url: 'file:///etc/passwd' }, 'image_url'],
  ...(['width', 'height'] as const).flatMap((f): Case[] => [
    [`${f} 1`, { [f]: 1 }],
    [`${f} 0`, { [f]: 0 }, f],
    [`${f} 32001`, { [f]: 32001 }, f],
    [`${f} 1000.5 (integers only)`, { [f]: 1000.5 }, f],
    [`${f} as the string "1024"`, { [f]: '1024' }, f],
    [`${f} missing`, { [f]: undefined }, f],
  ]),
  ['8000 x 8000: exactly the 64-megapixel cap', { width: 8000, height: 8000 }],
  ['32000 x 2000: the longest side at the cap', { width: 32000, height: 2000 }],
  ['8001 x 8000: over the cap', { width: 8001, height: 8000 }, "'width' x 'height' must be at most 64,000,000 pixels"],
  ['32000 x 32000: both sides allowed, the product not', { width: 32000, height: 32000 }, "'width' x 'height'"],
  ['16383 x 3000 as webp: the longest side WebP stores', { width: 16383, height: 3000, output_format: 'webp' }],
  ['20000 x 100 as webp: past the side WebP can store', { width: 20000, height: 100, output_format: 'webp' }, "must be at most 16383 with output_format 'webp'"],
  ['20000 x 100 as png: no side limit', { width: 20000, height: 100, output_format: 'png' }],
  ['model missing', { model: undefined }, 'model'],
  ...(['png', 'jpg', 'webp'] as const).map((f): Case => [`output_format ${f}`, { output_format: f }]),
  ['output_format jpeg (the original says jpg)', { output_format: 'jpeg' }, 'output_format'],
  ['prompt of 1024 characters', { prompt: 'p'.repeat(1024) }],
  ['prompt of 1025 characters', { prompt: 'p'.repeat(1025) }, 'prompt'],
  ['seed 4294967295', { seed: 4294967295 }],
  ['seed -1', { seed: -1 }, 'seed'],
  ['seed 1.5', { seed: 1.5 }, 'seed'],
  ...(['sharpen', 'denoise', 'fix_compression', 'face_enhancement_creativity', 'face_enhancement_strength'] as const).flatMap((f): Case[] => [
    [`${f} 0`, { [f]: 0 }],
    [`${f} 1`, { [f]: 1 }],
    [`${f} -0.1`, { [f]: -0.1 }, f],
    [`${f} 1.1`, { [f]: 1.1 }, f],
  ]),
  ['strength 0.01', { strength: 0.01 }],
  ['strength 1', { strength: 1 }],
  ['strength 0', { strength: 0 }, 'strength'],
  ['strength 1.01', { strength: 1.01 }, 'strength'],
  ...(['face_enhancement', 'crop_to_fill', 'upscaling_activated'] as const).flatMap((f): Case[] => [
    [`${f} true`, { [f]: true }],
    [`${f} as the string "true"`, { [f]: 'true' }, f],
  ]),
  ...(['all', 'foreground', 'background'] as const).map((v): Case => [`subject_detection ${v}`, { subject_detection: v }]),
  ['subject_detection none', { subject_detection: 'none' }, 'subject_detection'],
  ['image_scaling_factor 1', { image_scaling_factor: 1 }],
  ['image_scaling_factor 32', { image_scaling_factor: 32 }],
  ['image_scaling_factor 0.5', { image_scaling_factor: 0.5 }, 'image_scaling_factor'],
  ['image_scaling_factor 33', { image_scaling_factor: 33 }, 'image_scaling_factor'],
  ['an unknown field', { upscale_factor: 2 }, "unknown property 'upscale_factor'"],
  ['a camelCase field (no aliases)', { imageUrl: 'https://example.com/a.png' }, "unknown property 'imageUrl'"],
];

const STANDARD_CASES: Case[] = [
  ...SHARED,
  ...['Standard V2', 'Low Resolution V2', 'CGI', 'High Fidelity V2', 'Text Refine'].map((m): Case => [`model ${m}`, { model: m }]),
  ['model Redefine (a generative model)', { model: 'Redefine' }, 'model'],
  ['creativity (generative-enhance only)', { creativity: 3 }, "unknown property 'creativity'"],
];

const GENERATIVE_CASES: Case[] = [
  ...SHARED,
  ...['Redefine', 'Recovery', 'Recovery V2'].map((m): Case => [`model ${m}`, { model: m }]),
  ['model Standard V2 (a standard model)', { model: 'Standard V2' }, 'model'],
  ['creativity 1', { creativity: 1 }],
  ['creativity 6', { creativity: 6 }],
  ['creativity 0', { creativity: 0 }, 'creativity'],
  ['creativity 7', { creativity: 7 }, 'creativity'],
  ['creativity 2.5', { creativity: 2.5 }, 'creativity'],
];

let g: Gen;
beforeAll(async () => {
  g = await openGen();
});
afterAll(() => g.t.close());

describe.each([
  [STANDARD, MIN_STANDARD, STANDARD_CASES],
  [GENERATIVE, MIN_GENERATIVE, GENERATIVE_CASES],
] as const)('POST /generate/%s request body', (path, minimal, cases) => {
  const rows = cases.map(([name, patch, field]) => ({ name, patch, field }));

  it.each(rows.filter((c) => c.field === undefined))('accepts $name', async ({ patch }) => {
    const { stored } = await accept(g, path, { ...minimal, ...patch });
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) expect(stored.request[k]).toEqual(v);
  });

  it.each(rows.filter((c) => c.field !== undefined))('refuses $name with 400 naming it', async ({ patch, field }) => {
    await reject(g, path, { ...minimal, ...patch }, field!);
  });

  it('refuses a data: URI past 1024 characters, pointing to POST /assets for a larger file', async () => {
    const large = `data:image/png;base64,${'A'.repeat(1100)}`;
    const message = await reject(g, path, { ...minimal, image_url: large }, 'image_url');
    expect(message).toBe("'image_url' must be at most 1024 characters; to send a larger file, upload it with POST /assets and pass the asset's URL");
  });

  it('accepts zero data retention, which both enhancers offer', async () => {
    const { stored } = await accept(g, path, minimal, { 'x-api-zero-data-retention': '1' });
    expect(stored.zeroDataRetention).toBe(true);
  });
});

describe('enhance defaults and listing', () => {
  it('stores the defaults with a minimal body; the filters stay absent, to take the model\'s own settings', async () => {
    const defaults = { output_format: 'jpg', strength: 1, face_enhancement: false, face_enhancement_creativity: 0, face_enhancement_strength: 0.8, subject_detection: 'all', crop_to_fill: false, upscaling_activated: true };
    expect((await accept(g, STANDARD, MIN_STANDARD)).stored.request).toEqual({ ...MIN_STANDARD, ...defaults, seed: expect.any(Number) });
    expect((await accept(g, GENERATIVE, MIN_GENERATIVE)).stored.request).toEqual({ ...MIN_GENERATIVE, ...defaults, creativity: 3, seed: expect.any(Number) });
  });

  it('lists both in GET /models as image models with their price rules, under the image enhance tag in OpenAPI', async () => {
    const doc = (await get(g.t, '/openapi.json')).json<{ paths: Record<string, { post: { tags: string[]; requestBody: { content: Record<string, { schema: unknown }> } } }> }>();
    for (const [path, name] of [[STANDARD, 'StandardEnhanceRequest'], [GENERATIVE, 'GenerativeEnhanceRequest']] as const) {
      const op = doc.paths[`/generate/${path}`]!.post;
      expect(op.tags).toEqual(['image enhance']);
      expect(op.requestBody.content['application/json']!.schema).toEqual({ $ref: `#/components/schemas/${name}` });
      const model = (await get(g.t, `/models/${path}`)).json<{ kind: string; price: { rates_micro_usd: Record<string, number> } }>();
      expect(model.kind).toBe('image');
      expect(Object.keys(model.price.rates_micro_usd)).toHaveLength(1);
    }
  });
});

describe('enhance prices', () => {
  const table = buildPriceTable();
  const price = (path: string, width: number, height: number) => table.priceOf(path, { width, height });

  it('standard-enhance: $0.08 for each started 24 output megapixels', () => {
    expect(price(STANDARD, 100, 100)).toBe(80_000);
    expect(price(STANDARD, 6000, 4000)).toBe(80_000); // exactly 24 MP
    expect(price(STANDARD, 6000, 4001)).toBe(160_000);
    expect(price(STANDARD, 8000, 8000)).toBe(240_000); // 64 MP: 3 blocks
  });

  it('generative-enhance: $0.08 for each started 4 output megapixels', () => {
    expect(price(GENERATIVE, 2000, 2000)).toBe(80_000);
    expect(price(GENERATIVE, 2000, 2001)).toBe(160_000);
    expect(price(GENERATIVE, 8000, 8000)).toBe(1_280_000); // 64 MP: 16 blocks
  });

  it('holds the price from width and height when the job is created', async () => {
    const before = await expectLedgerConsistent(g.t.store, g.t.workspaceId);
    const res = await generate(g.t, GENERATIVE, { ...MIN_GENERATIVE, width: 4000, height: 3000 });
    expect(res.statusCode, res.body).toBe(200);
    const after = await expectLedgerConsistent(g.t.store, g.t.workspaceId);
    expect(after.held - before.held).toBe(3 * 80_000); // 12 MP: 3 blocks of 4
  });
});
