import type { PricedRequest, VideoShape } from '../model.js';

/**
 * The frames and lengths of the built-in video models, read from a request as it is stored
 * (validated, defaults applied). The local engine renders exactly these, and OpenAI's video object
 * reports them, so the two cannot disagree. A value outside the schema (a request stored by an
 * older one) falls back to the model's default rather than making an odd size or length.
 */

type Size = readonly [number, number];

/** Frame sizes by aspect ratio at the 720p and 1080p tiers (model-d-fast; model-e-1 std and pro). */
export const VIDEO_SIZES: Readonly<Record<string, Readonly<Record<string, Size>>>> = Object.freeze({
  '720p': { '16:9': [1280, 720], '9:16': [720, 1280], '1:1': [720, 720] },
  '1080p': { '16:9': [1920, 1080], '9:16': [1080, 1920], '1:1': [1080, 1080] },
});

const text = (q: PricedRequest, key: string, fallback: string) => (typeof q[key] === 'string' ? q[key] : fallback);

/** One of the allowed lengths: the asked one, else the default. */
function length(q: PricedRequest, allowed: readonly number[], fallback: number): number {
  const v = q.duration;
  return typeof v === 'number' && allowed.includes(v) ? v : fallback;
}

function tierShape(tier: string, aspect: string, seconds: number): VideoShape {
  const [width, height] = VIDEO_SIZES[tier]?.[aspect] ?? VIDEO_SIZES['720p']!['16:9']!;
  return { width, height, seconds };
}

/** model-d-fast: its aspect ratio at its resolution, 4, 6 or 8 seconds. */
export const modelDFastShape = (q: PricedRequest): VideoShape => tierShape(text(q, 'resolution', '720p'), text(q, 'aspect_ratio', '16:9'), length(q, [4, 6, 8], 8));

/** model-e-1: no resolution field; mode `pro` renders 1080p, `std` 720p; 5 or 10 seconds. */
export const modelE1Shape = (q: PricedRequest): VideoShape =>
  tierShape(text(q, 'mode', 'std') === 'pro' ? '1080p' : '720p', text(q, 'aspect_ratio', '16:9'), length(q, [5, 10], 5));

/** model-f has no size or length parameters: one fixed shape (docs/engine.md). */
export const MODEL_F_SHAPE: VideoShape = Object.freeze({ width: 1280, height: 720, seconds: 5 });
