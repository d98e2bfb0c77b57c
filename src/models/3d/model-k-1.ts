import { Type } from '@sinclair/typebox';
import type { ModelModule } from '../model.js';
import { Uri, closed } from '../schema-kit.js';

/** The bounds of `face_limit`: docs/decisions.md says why these. */
export const FACE_LIMIT_MIN = 500;
export const FACE_LIMIT_MAX = 200_000;
export const FACE_LIMIT_DEFAULT = 20_000;

/**
 * Image to 3D. The field names and the texture default follow the image-to-3D APIs the original
 * routes to (Tripo's `texture` and `face_limit`); the original publishes no bounds, so the
 * face_limit range is ours (docs/decisions.md).
 */
export const ModelK1Request = Type.Object(
  {
    image_url: Uri(
      "Image to build the 3D model from: an http(s) URL (external or an uploaded asset's URL) or a base64 data URI. A single object on a plain background works best.",
      { examples: ['https://assets.example/product.png'] },
    ),
    prompt: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Text describing the object, at most 1024 characters.', examples: ['A ceramic mug with a blue glaze'] }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4294967295,
        description: 'Seed for reproducible output, from 0 to 4294967295: the same seed with the same request gives the same model.',
        examples: [42],
      }),
    ),
    texture: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'Whether the model is textured with the image; false gives an untextured model in one plain colour, at a lower price.',
        examples: [false],
      }),
    ),
    face_limit: Type.Optional(
      Type.Integer({
        minimum: FACE_LIMIT_MIN,
        maximum: FACE_LIMIT_MAX,
        default: FACE_LIMIT_DEFAULT,
        description: `Most triangles the model may have, from ${FACE_LIMIT_MIN} to ${FACE_LIMIT_MAX}.`,
        examples: [50_000],
      }),
    ),
  },
  closed,
);

export const MODEL_K1: ModelModule = {
  path: '3d/vendor-k/model-k-1',
  summary: 'Generate a 3D model from an image with model-k-1',
  kind: '3d',
  tag: '3d generation',
  request: ModelK1Request,
  requestName: 'ModelK1Request',
  aliases: [],
  // The original publishes no price for its 3D models; docs/decisions.md records this choice.
  price: {
    rates: { textured: 300_000, untextured: 200_000 },
    unit: 'per request: textured when texture is true (the default), else untextured',
    price: (r, q) => (q.texture === false ? r.untextured! : r.textured!),
  },
  zeroDataRetention: true,
  engine: 'local',
};
