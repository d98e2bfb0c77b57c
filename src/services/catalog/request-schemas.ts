import { Type } from '@sinclair/typebox';
import { Nullable, NumberEnum, StringEnum, Uri, closed } from './schema-kit.js';

/**
 * Request bodies of the generation endpoints, exactly as spec section 4.2 tables them. Defaults
 * here are applied by validation and stored with the job. Deprecated aliases are not part of these
 * schemas: they are renamed (or refused) before validation, see aliases.ts.
 */

const MediaUrl = Uri({ maxLength: 1024 });

export const ModelA2Request = Type.Object(
  {
    prompt: Type.String(),
    aspect_ratio: StringEnum(['1:1', '4:3', '3:2', '16:9', '2.35:1', '4:5', '2:3', '9:16']),
    resolution: StringEnum(['1K']),
    seed: Type.Optional(Nullable(Type.Number())),
    styles: Type.Optional(
      Type.Array(
        Type.Object({ id: Type.String(), strength: Type.Number({ minimum: -2, maximum: 2 }) }, closed),
      ),
    ),
    image_style_references: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: MediaUrl,
            strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5 })),
          },
          closed,
        ),
        { maxItems: 10 },
      ),
    ),
    creativity: Type.Optional(
      StringEnum(['raw', 'low', 'medium', 'high'], {
        default: 'low',
        description: '`raw` turns prompt expansion off. Does not affect the sliders.',
      }),
    ),
    intensity: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    complexity: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    movement: Type.Optional(Type.Integer({ minimum: -100, maximum: 100, default: 0 })),
    moodboards: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ format: 'uuid' }),
            strength: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.23 })),
          },
          closed,
        ),
        { maxItems: 1 },
      ),
    ),
    image_url: Type.Optional(Nullable(MediaUrl, { description: 'Source image for image-to-image.' })),
    strength: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: 0.99,
        description: '0 keeps the input image, 1 replaces it; no effect without image_url.',
      }),
    ),
  },
  closed,
);

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

const VideoAspect = StringEnum(['16:9', '9:16', '1:1'], { default: '16:9' });

export const ModelDFastRequest = Type.Object(
  {
    prompt: Type.String(),
    start_image: Type.Optional(Nullable(Uri())),
    aspect_ratio: Type.Optional(VideoAspect),
    duration: Type.Optional(NumberEnum([4, 6, 8], { default: 8, description: 'Seconds.' })),
    generate_audio: Type.Optional(Type.Boolean({ default: false })),
    resolution: Type.Optional(StringEnum(['720p', '1080p'], { default: '720p' })),
  },
  closed,
);

export const ModelE1Request = Type.Object(
  {
    prompt: Type.String(),
    start_image: Type.Optional(Uri()),
    aspect_ratio: Type.Optional(VideoAspect),
    duration: Type.Optional(NumberEnum([5, 10], { default: 5, description: 'Seconds.' })),
    // Fields not shown by the spec: any object is accepted.
    camera_control: Type.Optional(Type.Object({})),
    end_image: Type.Optional(Uri()),
    mode: Type.Optional(StringEnum(['std', 'pro'], { default: 'std' })),
  },
  closed,
);

export const ModelFRequest = Type.Object(
  {
    prompt: Type.String(),
    start_image: Type.Optional(Uri()),
    expand_prompt: Type.Optional(Type.Boolean({ default: true })),
  },
  closed,
);
