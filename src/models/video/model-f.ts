import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import type { ModelModule } from '../model.js';
import { Uri, closed } from '../schema-kit.js';

export const ModelFRequest = Type.Object(
  {
    prompt: Type.String(),
    start_image: Type.Optional(Uri()),
    expand_prompt: Type.Optional(Type.Boolean({ default: true })),
  },
  closed,
);

export const MODEL_F: ModelModule = {
  path: 'video/vendor-f/model-f',
  summary: 'Generate a video with model-f',
  kind: 'video',
  request: ModelFRequest,
  requestName: 'ModelFRequest',
  aliases: [alias('startImage', 'start_image'), alias('expandPrompt', 'expand_prompt')],
  price: { rates: { per_request: 451_500 }, unit: 'per request', price: (r) => r.per_request! },
  zeroDataRetention: false,
  engine: 'local',
};
