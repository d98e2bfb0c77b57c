import { describe, expect, it } from 'vitest';
import { PRICES } from '../../src/services/catalog/prices.js';

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
    const price = PRICES[`image/vendor-a/model-a-2/${variant}`];
    expect(price({})).toBe(usd(base));
    expect(price({ image_style_references: [] })).toBe(usd(base));
    expect(price({ image_style_references: refs })).toBe(usd(withRefs));
    expect(price({ moodboards: mood })).toBe(usd(withMood));
    expect(price({ moodboards: mood, image_style_references: refs })).toBe(usd(withMood));
  });

  it('model-b-1: base per mode plus $0.003 per reference image', () => {
    const price = PRICES['image/vendor-b/model-b-1'];
    const images = (n: number) => Array.from({ length: n }, () => ({}));
    expect(price({ mode: 'standard', style_images: [] })).toBe(usd('0.0404'));
    expect(price({ mode: 'standard', style_images: images(9) })).toBe(usd('0.0674'));
    expect(price({ mode: 'max' })).toBe(usd('0.10'));
    expect(price({ mode: 'max', style_images: images(9) })).toBe(usd('0.127'));
  });

  it('model-d-fast: per second, at the audio rate with audio', () => {
    const price = PRICES['video/vendor-d/model-d-fast'];
    expect(price({ duration: 8, generate_audio: false })).toBe(usd('0.84'));
    expect(price({ duration: 4, generate_audio: true })).toBe(usd('0.63'));
  });

  it("model-e-1: per second at the mode's rate", () => {
    const price = PRICES['video/vendor-e/model-e-1'];
    expect(price({ duration: 5, mode: 'std' })).toBe(usd('0.1105'));
    expect(price({ duration: 10, mode: 'pro' })).toBe(usd('0.772'));
  });

  it('model-f: per request', () => {
    expect(PRICES['video/vendor-f/model-f']({})).toBe(usd('0.4515'));
  });

  it('every price is a whole number of micro-USD', () => {
    for (const hook of Object.values(PRICES)) expect(Number.isSafeInteger(hook({ duration: 10 }))).toBe(true);
  });
});
