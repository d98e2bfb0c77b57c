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

/** An image URL of at most 1024 characters: external, an uploaded asset's URL, or a data URI. */
const MediaUrl = (description: string, example: string) => Uri(description, { maxLength: 1024, examples: [example] });

const STYLE_EXAMPLE = { id: 'style-7f3a', strength: 1 };
const REFERENCE_EXAMPLE = { url: 'https://assets.example/style-reference.png', strength: 0.5 };
const MOODBOARD_EXAMPLE = { id: '3f2a9c4e-8b1d-4e7a-9c6f-1a2b3c4d5e6f', strength: 0.23 };

const slider = (what: string, example: number) =>
  Type.Optional(
    Type.Integer({ minimum: -100, maximum: 100, default: 0, description: `${what} slider, from -100 to 100; 0 is neutral.`, examples: [example] }),
  );

export const ModelA2Request = Type.Object(
  {
    prompt: Type.String({ description: 'Text describing the image to generate.', examples: ['A red fox in fresh snow at golden hour'] }),
    aspect_ratio: StringEnum(['1:1', '4:3', '3:2', '16:9', '2.35:1', '4:5', '2:3', '9:16'], {
      description: 'Aspect ratio of the image.',
      examples: ['16:9'],
    }),
    resolution: StringEnum(['1K'], { description: 'Resolution of the image; `1K` is the only value.', examples: ['1K'] }),
    seed: Type.Optional(
      Nullable(Type.Number(), {
        description: 'Seed for reproducible output: the same seed with the same request gives the same image.',
        examples: [42],
      }),
    ),
    styles: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ description: 'Identifier of the style.', examples: [STYLE_EXAMPLE.id] }),
            strength: Type.Number({ minimum: -2, maximum: 2, description: 'Weight of the style, from -2 to 2.', examples: [STYLE_EXAMPLE.strength] }),
          },
          { ...closed, description: 'A style and its weight.', examples: [STYLE_EXAMPLE] },
        ),
        { description: 'Styles to apply, each with its weight.', examples: [[STYLE_EXAMPLE]] },
      ),
    ),
    image_style_references: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: MediaUrl(
              'The reference image: an http(s) URL (external or an uploaded asset\'s URL) or a base64 data URI, at most 1024 characters.',
              REFERENCE_EXAMPLE.url,
            ),
            strength: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 1,
                default: 0.5,
                description: "How strongly the reference's style applies, from 0 to 1.",
                examples: [REFERENCE_EXAMPLE.strength],
              }),
            ),
          },
          { ...closed, description: 'An image whose style the output follows.', examples: [REFERENCE_EXAMPLE] },
        ),
        { maxItems: 10, description: 'Images whose style the output follows, at most 10.', examples: [[REFERENCE_EXAMPLE]] },
      ),
    ),
    creativity: Type.Optional(
      StringEnum(['raw', 'low', 'medium', 'high'], {
        default: 'low',
        description: 'How freely the prompt is expanded (`raw` turns expansion off); the sliders are not affected.',
        examples: ['medium'],
      }),
    ),
    intensity: slider('Intensity', 25),
    complexity: slider('Complexity', -20),
    movement: slider('Movement', 40),
    moodboards: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ format: 'uuid', description: 'Identifier (UUID) of the moodboard.', examples: [MOODBOARD_EXAMPLE.id] }),
            strength: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 1,
                default: 0.23,
                description: 'How strongly the moodboard applies, from 0 to 1.',
                examples: [MOODBOARD_EXAMPLE.strength],
              }),
            ),
          },
          { ...closed, description: 'A moodboard and its weight.', examples: [MOODBOARD_EXAMPLE] },
        ),
        { maxItems: 1, description: 'A moodboard whose look the image takes (at most one).', examples: [[MOODBOARD_EXAMPLE]] },
      ),
    ),
    image_url: Type.Optional(
      Nullable(
        MediaUrl(
          'Source image for image-to-image, in the same forms as a style reference url; null or absent for text-to-image.',
          'https://assets.example/input.png',
        ),
      ),
    ),
    strength: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: 0.99,
        description: 'How much of the source image is replaced, from 0 (kept) to 1 (replaced); no effect without image_url.',
        examples: [0.7],
      }),
    ),
  },
  closed,
);

/** Text-to-image, or with style references, or with moodboards (moodboards win). */
const price = (text_to_image: MicroUsd, style_references: MicroUsd, moodboards: MicroUsd): PriceRule => ({
  rates: { text_to_image, style_references, moodboards },
  unit: 'per request: moodboards when moodboards is non-empty, else style_references when image_style_references is non-empty, else text_to_image',
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
