import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import { itemCount } from '../model.js';
import type { ModelModule } from '../model.js';
import { Nullable, StringEnum, closed } from '../schema-kit.js';

const side = (what: string, example: number) =>
  Type.Optional(
    Type.Number({ minimum: 512, maximum: 8192, default: 1024, description: `${what} of the image in pixels, from 512 to 8192.`, examples: [example] }),
  );

export const ModelB1Request = Type.Object(
  {
    prompt: Type.String({
      minLength: 1,
      maxLength: 6000,
      description: 'Text describing the image to generate, 1 to 6000 characters.',
      examples: ['A red fox in fresh snow at golden hour'],
    }),
    width: side('Width', 1536),
    height: side('Height', 1024),
    mode: Type.Optional(
      StringEnum(['standard', 'max'], { default: 'standard', description: 'Generation mode: `standard`, or `max` at a higher price.', examples: ['standard'] }),
    ),
    style: Type.Optional(StringEnum(['auto', 'manga'], { default: 'auto', description: 'Rendering style: `auto` or `manga`.', examples: ['manga'] })),
    output_format: Type.Optional(
      Nullable(StringEnum(['png', 'jpeg']), { description: 'File format of the image; null or absent gives `png`.', examples: ['jpeg'] }),
    ),
    // Item fields are not shown by the spec: any object is accepted.
    style_images: Type.Optional(
      Type.Array(Type.Object({}, { description: 'An image prompt; its fields are not specified, so any JSON object is accepted.', examples: [{}] }), {
        maxItems: 9,
        description: 'Image prompts, at most 9, each one adding to the price.',
        examples: [[{}]],
      }),
    ),
    // Named by the spec only as the rename target of `webSearch`; its shape is our decision.
    web_search: Type.Optional(
      Type.Boolean({ description: 'Web search option: the API reference names the field without giving its shape, so a boolean is accepted and stored with the job.', examples: [false] }),
    ),
  },
  closed,
);

export const MODEL_B1: ModelModule = {
  path: 'image/vendor-b/model-b-1',
  summary: 'Generate an image with model-b-1',
  kind: 'image',
  request: ModelB1Request,
  requestName: 'ModelB1Request',
  aliases: [alias('outputFormat', 'output_format'), alias('webSearch', 'web_search'), alias('styleImages', 'style_images')],
  price: {
    rates: { standard: 40_400, max: 100_000, per_style_image: 3_000 },
    unit: "per request: the mode's rate plus per_style_image for each style_images item",
    price: (r, q) => (q.mode === 'max' ? r.max! : r.standard!) + r.per_style_image! * itemCount(q.style_images),
  },
  zeroDataRetention: false,
  engine: 'local',
};
