/**
 * The price table of spec section 8, in integer micro-USD (1 USD = 1,000,000). Every price the
 * service charges is computed here and nowhere else.
 */
export type MicroUsd = number;
type Req = Readonly<Record<string, unknown>>;
export type PriceHook = (request: Req) => MicroUsd;

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/** model-a-2: text-to-image, or with style references, or with moodboards (moodboards win). */
const modelA2 = (base: MicroUsd, withRefs: MicroUsd, withMoodboards: MicroUsd): PriceHook => (r) =>
  count(r.moodboards) > 0 ? withMoodboards : count(r.image_style_references) > 0 ? withRefs : base;

export const PRICES = Object.freeze({
  'image/vendor-a/model-a-2/medium': modelA2(30_000, 35_000, 40_000),
  'image/vendor-a/model-a-2/large': modelA2(60_000, 65_000, 70_000),
  'image/vendor-a/model-a-2/medium-turbo': modelA2(15_000, 17_500, 20_000),
  'image/vendor-b/model-b-1': ((r) =>
    (r.mode === 'max' ? 100_000 : 40_400) + 3_000 * count(r.style_images)) as PriceHook,
  'video/vendor-d/model-d-fast': ((r) =>
    (r.generate_audio === true ? 157_500 : 105_000) * Number(r.duration)) as PriceHook,
  'video/vendor-e/model-e-1': ((r) => (r.mode === 'pro' ? 77_200 : 22_100) * Number(r.duration)) as PriceHook,
  'video/vendor-f/model-f': (() => 451_500) as PriceHook,
  // The spec shows no price for model-c-edit; docs/decisions.md records this choice.
  'video/vendor-c/model-c-edit': (() => 500_000) as PriceHook,
} satisfies Record<string, PriceHook>);
