import { describe, expect, it } from 'vitest';
import { PRICE_RULES, PriceError, buildPriceTable } from '../../src/models/prices.js';
import { MODELS } from '../../src/models/registry.js';

const table = buildPriceTable();
const PRICES = Object.fromEntries(
  Object.keys(PRICE_RULES).map((m) => [m, (r: Record<string, unknown>) => table.priceOf(m, r)]),
) as Record<string, (r: Record<string, unknown>) => number | undefined>;

/** Every figure from the price table of spec section 8, in micro-USD. */
describe('price table', () => {
  const usd = (s: string) => Math.round(Number(s) * 1_000_000);
  const refs = [{ url: 'https://example.com/a.png' }];
  const mood = [{ id: '00000000-0000-4000-8000-000000000000' }];

  it.each([
    ['medium', '0.03', '0.035', '0.04'],
    ['large', '0.06', '0.065', '0.07'],
    ['medium-turbo', '0.015', '0.0175', '0.02'],
  ] as const)('model-a-2 %s: text-to-image, style references, moodboards', (variant, base, withRefs, withMood) => {
    const price = PRICES[`image/vendor-a/model-a-2/${variant}`]!;
    expect(price({})).toBe(usd(base));
    expect(price({ image_style_references: [] })).toBe(usd(base));
    expect(price({ image_style_references: refs })).toBe(usd(withRefs));
    expect(price({ moodboards: mood })).toBe(usd(withMood));
    expect(price({ moodboards: mood, image_style_references: refs })).toBe(usd(withMood));
  });

  it('model-b-1: base per mode plus $0.003 per reference image', () => {
    const price = PRICES['image/vendor-b/model-b-1']!;
    const images = (n: number) => Array.from({ length: n }, () => ({}));
    expect(price({ mode: 'standard', style_images: [] })).toBe(usd('0.0404'));
    expect(price({ mode: 'standard', style_images: images(9) })).toBe(usd('0.0674'));
    expect(price({ mode: 'max' })).toBe(usd('0.10'));
    expect(price({ mode: 'max', style_images: images(9) })).toBe(usd('0.127'));
  });

  it('model-d-fast: per second, at the audio rate with audio', () => {
    const price = PRICES['video/vendor-d/model-d-fast']!;
    expect(price({ duration: 8, generate_audio: false })).toBe(usd('0.84'));
    expect(price({ duration: 4, generate_audio: true })).toBe(usd('0.63'));
  });

  it("model-e-1: per second at the mode's rate", () => {
    const price = PRICES['video/vendor-e/model-e-1']!;
    expect(price({ duration: 5, mode: 'std' })).toBe(usd('0.1105'));
    expect(price({ duration: 10, mode: 'pro' })).toBe(usd('0.772'));
  });

  it('model-f: per request', () => {
    expect(PRICES['video/vendor-f/model-f']!({})).toBe(usd('0.4515'));
  });

  it('model-l-1: per second of duration, the default 10 s when absent', () => {
    const price = PRICES['audio/vendor-l/model-l-1']!;
    expect(price({ duration: 1 })).toBe(usd('0.002'));
    expect(price({ duration: 120 })).toBe(usd('0.24'));
    expect(price({})).toBe(usd('0.02'));
  });

  it('every price is a whole number of micro-USD', () => {
    for (const hook of Object.values(PRICES)) expect(Number.isSafeInteger(hook({ duration: 10 }))).toBe(true);
  });

  it('model-c-edit has the provisional per-request price of docs/decisions.md ($0.50)', () => {
    expect(PRICES['video/vendor-c/model-c-edit']!({})).toBe(usd('0.50'));
  });

  it('every model that takes requests has a price, and retired ones none', () => {
    for (const m of MODELS) expect(table.priceOf(m.path, { duration: 5 }) !== undefined).toBe(m.request !== undefined);
  });
});

describe('price overrides from the config file', () => {
  it('replace only the rates they name', () => {
    const t = buildPriceTable({ 'image/vendor-a/model-a-2/medium': { moodboards: 45_000 }, 'video/vendor-c/model-c-edit': { per_request: 250_000 } });
    expect(t.priceOf('image/vendor-a/model-a-2/medium', { moodboards: [{}] })).toBe(45_000);
    expect(t.priceOf('image/vendor-a/model-a-2/medium', {})).toBe(30_000);
    expect(t.priceOf('video/vendor-c/model-c-edit', {})).toBe(250_000);
    expect(t.priceOf('image/vendor-a/model-a-2/large', { moodboards: [{}] })).toBe(70_000);
  });

  it("a metered model's charge never passes its price (the hold), however long the output it reports", () => {
    const upscale = 'enhance/vendor-j/video-upscale';
    const request = { resolution: '1080p' };
    const price = table.priceOf(upscale, request)!;
    expect(table.chargeOf(upscale, request, { outputUs: 1_000_000 })!).toBeLessThan(price);
    expect(table.chargeOf(upscale, request, { outputUs: 86_400_000_000 })).toBe(price);
    expect(table.chargeOf(upscale, request, { outputUs: 1e30 })).toBe(price);
  });

  it('can make a model free', () => {
    expect(buildPriceTable({ 'video/vendor-f/model-f': { per_request: 0 } }).priceOf('video/vendor-f/model-f', {})).toBe(0);
  });

  it('refuse unknown models and unknown rates, naming what exists', () => {
    expect(() => buildPriceTable({ 'image/vendor-z/nope': { per_request: 1 } })).toThrow(PriceError);
    expect(() => buildPriceTable({ 'image/vendor-z/nope': { per_request: 1 } })).toThrow(/unknown model 'image\/vendor-z\/nope'/);
    expect(() => buildPriceTable({ 'video/vendor-e/model-e-1': { per_second: 1 } })).toThrow(/unknown rate 'per_second'; its rates are std_per_second, pro_per_second/);
  });
});
