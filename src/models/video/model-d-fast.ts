import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import type { ModelModule } from '../model.js';
import { NumberEnum, Nullable, START_IMAGE_DESCRIPTION, StringEnum, Uri, VideoAspect, closed } from '../schema-kit.js';
import { modelDFastShape } from './video-shapes.js';

export const ModelDFastRequest = Type.Object(
  {
    prompt: Type.String({ description: 'Text describing the video to generate.', examples: ['A red fox trotting through fresh snow'] }),
    start_image: Type.Optional(Nullable(Uri(START_IMAGE_DESCRIPTION))),
    aspect_ratio: Type.Optional(VideoAspect()),
    duration: Type.Optional(NumberEnum([4, 6, 8], { default: 8, description: 'Length of the video in seconds.', examples: [6] })),
    generate_audio: Type.Optional(
      Type.Boolean({ default: false, description: 'Whether to generate an audio track, at a higher rate per second.', examples: [true] }),
    ),
    resolution: Type.Optional(StringEnum(['720p', '1080p'], { default: '720p', description: 'Resolution of the video.', examples: ['1080p'] })),
  },
  closed,
);

export const MODEL_D_FAST: ModelModule = {
  path: 'video/vendor-d/model-d-fast',
  summary: 'Generate a video with model-d-fast',
  kind: 'video',
  request: ModelDFastRequest,
  requestName: 'ModelDFastRequest',
  aliases: [alias('startImage', 'start_image'), alias('aspectRatio', 'aspect_ratio'), alias('generateAudio', 'generate_audio')],
  price: {
    rates: { per_second: 105_000, per_second_with_audio: 157_500 },
    unit: 'per second of duration: per_second_with_audio when generate_audio is true, else per_second',
    price: (r, q) => (q.generate_audio === true ? r.per_second_with_audio! : r.per_second!) * Number(q.duration),
  },
  videoShape: modelDFastShape,
  zeroDataRetention: false,
  engine: 'local',
};
