import { Type } from '@sinclair/typebox';
import type { ModelModule } from '../model.js';
import { StringEnum, Uri, closed } from '../schema-kit.js';

export const ModelCEditRequest = Type.Object(
  {
    prompt: Type.String({ maxLength: 1000 }),
    init_video: Uri(),
    init_image_url: Type.Optional(Uri()),
    references: Type.Optional(Type.Array(Type.Object({}), { maxItems: 1 })),
    ratio: Type.Optional(
      StringEnum(['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672', '848:480', '640:480'], {
        default: '1280:720',
      }),
    ),
    seed: Type.Optional(Type.Number({ minimum: 0, maximum: 4294967295 })),
  },
  closed,
);

export const MODEL_C_EDIT: ModelModule = {
  path: 'video/vendor-c/model-c-edit',
  summary: 'Edit a video with model-c-edit',
  kind: 'video',
  request: ModelCEditRequest,
  requestName: 'ModelCEditRequest',
  aliases: [],
  // The spec shows no price for model-c-edit; docs/decisions.md records this choice.
  price: { rates: { per_request: 500_000 }, unit: 'per request', price: (r) => r.per_request! },
  zeroDataRetention: false,
  engine: 'local',
};
