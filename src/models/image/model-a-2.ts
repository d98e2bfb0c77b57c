import { Type } from '@sinclair/typebox';
import type { MicroUsd } from '../../domain/money.js';
import { alias } from '../aliases.js';
import { itemCount } from '../model.js';
import type { ModelModule, PriceRule } from '../model.js';
import { Nullable, StringEnum, Uri, closed } from '../schema-kit.js';

/**
 * model-a-2 (vendor A), text-to-image or image-to-image, in three variants that share one request
 * body and one price rule with their own rates. Defaults here are applied by validation and stored
 * with the job; deprecated aliases are renamed (or refused) before validation, see aliases.ts.
 */

const MediaUrl = Uri({ maxLength: 1024 });

export const ModelA2Request = Type.Object(
  {
    prompt: Type.String(),
    aspect_ratio: StringEnum(['1:1', '4:3', '3:2', '16:9', '2.35:1', '4:5', '2:3', '9:16']),
    resolution: StringEnum(['1K']),
    seed: Type.Optional(Nullable(Type.Number())),
    styles: Type.Optional(
      Type.Array(
        Type.Object({ id: Type.String(), strength: Type.Number({ minimum: -2, maximum: 2 }) }, closed),
      ),
    ),
    image_style_references: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: MediaUrl,
            strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5 })),
          },
          closed,
        ),
        { maxItems: 10 },
      ),
    ),
    creativity: Type.Optional(
      StringEnum(['raw', 'low', 'medium', 'high'], {
        default: 'low',
        description: '`raw` turns prompt expansion off. Does not affect the sliders.',
      }),
    ),
    intensity: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    complexity: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    movement: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    moodboards: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ format: 'uuid' }),
            strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.23 })),
          },
          closed,
        ),
        { maxItems: 1 },
      ),
    ),
    image_url: Type.Optional(Nullable(MediaUrl, { description: 'Source image for image-to-image.' })),
    strength: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: 0.99,
        description: '0 keeps the input image, 1 replaces it; no effect without image_url.',
      }),
    ),
  },
  closed,
);

/** Text-to-image, or with style references, or with moodboards (moodboards win). */
const price = (text_to_image: MicroUsd, style_references: MicroUsd, moodboards: MicroUsd): PriceRule => ({
  rates: { text_to_image, style_references, moodboards },
  unit: 'per request',
  price: (r, q) =>
    itemCount(q.moodboards) > 0 ? r.moodboards! : itemCount(q.image_style_references) > 0 ? r.style_references! : r.text_to_image!,
});

const variant = (name: string, rule: PriceRule): ModelModule => ({
  path: `image/vendor-a/model-a-2/${name}`,
  summary: `Generate an image with model-a-2 (${name})`,
  kind: 'image',
  request: ModelA2Request,
  requestName: 'ModelA2Request',
  aliases: [alias('presetStyles', 'styles'), alias('imageStyleRefs', 'image_style_references')],
  price: rule,
  zeroDataRetention: true,
  engine: 'local',
});

export const MODEL_A2: readonly ModelModule[] = [
  variant('medium', price(30_000, 35_000, 40_000)),
  variant('large', price(60_000, 65_000, 70_000)),
  variant('medium-turbo', price(15_000, 17_500, 20_000)),
];
