import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import type { ModelModule } from '../model.js';
import { START_IMAGE_DESCRIPTION, Uri, closed } from '../schema-kit.js';
import { MODEL_F_SHAPE } from './video-shapes.js';

export const ModelFRequest = Type.Object(
  {
    prompt: Type.String({ description: 'Text describing the video to generate.', examples: ['A red fox trotting through fresh snow'] }),
    start_image: Type.Optional(Uri(START_IMAGE_DESCRIPTION)),
    expand_prompt: Type.Optional(
      Type.Boolean({ default: true, description: 'Whether the prompt is expanded before generation.', examples: [false] }),
    ),
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
  videoShape: () => MODEL_F_SHAPE,
  zeroDataRetention: false,
  engine: 'local',
};
