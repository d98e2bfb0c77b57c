import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import { itemCount } from '../model.js';
import type { ModelModule } from '../model.js';
import { Nullable, StringEnum, closed } from '../schema-kit.js';

export const ModelB1Request = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 6000 }),
    width: Type.Optional(Type.Number({ minimum: 512, maximum: 8192, default: 1024 })),
    height: Type.Optional(Type.Number({ minimum: 512, maximum: 8192, default: 1024 })),
    mode: Type.Optional(StringEnum(['standard', 'max'], { default: 'standard' })),
    style: Type.Optional(StringEnum(['auto', 'manga'], { default: 'auto' })),
    output_format: Type.Optional(Nullable(StringEnum(['png', 'jpeg']))),
    // Item fields are not shown by the spec: any object is accepted.
    style_images: Type.Optional(Type.Array(Type.Object({}), { maxItems: 9 })),
    // Named by the spec only as the rename target of `webSearch`; its shape is our decision.
    web_search: Type.Optional(Type.Boolean()),
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
