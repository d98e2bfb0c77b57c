import { Type } from '@sinclair/typebox';
import type { ModelModule } from '../model.js';
import { StringEnum, Uri, closed } from '../schema-kit.js';

export const ModelCEditRequest = Type.Object(
  {
    prompt: Type.String({ maxLength: 1000, description: 'Text describing the edit, at most 1000 characters.', examples: ['Warm sunset light, film grain'] }),
    init_video: Uri('The video to edit: an http(s) URL (external or an uploaded asset\'s URL) or a base64 data URI.', {
      examples: ['https://assets.example/input.mp4'],
    }),
    init_image_url: Type.Optional(
      Uri('An image that guides the edit: an http(s) URL or a base64 data URI.', { examples: ['https://assets.example/reference.png'] }),
    ),
    // Item fields are not shown by the spec: any object is accepted.
    references: Type.Optional(
      Type.Array(Type.Object({}, { description: 'A reference; its fields are not specified, so any JSON object is accepted.', examples: [{}] }), {
        maxItems: 1,
        description: 'References for the edit, at most 1.',
        examples: [[{}]],
      }),
    ),
    ratio: Type.Optional(
      StringEnum(['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672', '848:480', '640:480'], {
        default: '1280:720',
        description: 'Frame size of the edited video, width:height in pixels.',
        examples: ['720:1280'],
      }),
    ),
    seed: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 4294967295,
        description: 'Seed for reproducible output, from 0 to 4294967295: the same seed with the same request gives the same video.',
        examples: [42],
      }),
    ),
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
