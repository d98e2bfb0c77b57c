import { Type } from '@sinclair/typebox';
import { alias } from '../aliases.js';
import type { ModelModule } from '../model.js';
import { NumberEnum, START_IMAGE_DESCRIPTION, StringEnum, Uri, VideoAspect, closed } from '../schema-kit.js';
import { modelE1Shape } from './video-shapes.js';

export const ModelE1Request = Type.Object(
  {
    prompt: Type.String({ description: 'Text describing the video to generate.', examples: ['A red fox trotting through fresh snow'] }),
    start_image: Type.Optional(Uri(START_IMAGE_DESCRIPTION)),
    aspect_ratio: Type.Optional(VideoAspect()),
    duration: Type.Optional(NumberEnum([5, 10], { default: 5, description: 'Length of the video in seconds.', examples: [10] })),
    // Fields not shown by the spec: any object is accepted.
    camera_control: Type.Optional(
      Type.Object({}, { description: 'Camera movement settings; their fields are not specified, so any JSON object is accepted.', examples: [{}] }),
    ),
    end_image: Type.Optional(
      Uri("Image the video ends on (its last frame): an http(s) URL (external or an uploaded asset's URL) or a base64 data URI.", {
        examples: ['https://assets.example/end.png'],
      }),
    ),
    mode: Type.Optional(
      StringEnum(['std', 'pro'], { default: 'std', description: "Quality mode: `std`, or `pro` at a higher rate per second.", examples: ['pro'] }),
    ),
  },
  closed,
);

export const MODEL_E1: ModelModule = {
  path: 'video/vendor-e/model-e-1',
  summary: 'Generate a video with model-e-1',
  kind: 'video',
  request: ModelE1Request,
  requestName: 'ModelE1Request',
  aliases: [
    alias('startImage', 'start_image'),
    alias('aspectRatio', 'aspect_ratio'),
    alias('cameraControl', 'camera_control'),
    alias('endImage', 'end_image'),
  ],
  price: {
    rates: { std_per_second: 22_100, pro_per_second: 77_200 },
    unit: 'per second of duration: pro_per_second in mode pro, else std_per_second',
    price: (r, q) => (q.mode === 'pro' ? r.pro_per_second! : r.std_per_second!) * Number(q.duration),
  },
  videoShape: modelE1Shape,
  zeroDataRetention: false,
  engine: 'local',
};
