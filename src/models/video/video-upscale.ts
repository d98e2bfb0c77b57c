import { Type } from '@sinclair/typebox';
import type { MicroUsd } from '../../domain/money.js';
import type { ModelModule, PricedRequest, Rates } from '../model.js';
import { NumberEnum, StringEnum, Uri, closed } from '../schema-kit.js';
import { DEFAULTS } from '../../config/options.js';

/**
 * enhance/vendor-j/video-upscale: a video made larger (a factor or a named resolution) and,
 * optionally, re-timed to a new frame rate by interpolation; its length and sound are kept.
 * Priced per output second, which is the input's length: unknown until the input is probed, so
 * the job holds the price of the longest input this model takes and is charged what it made.
 */

/** The longest input this model takes (the default `input_max_video_seconds`): what admission holds for. */
export const UPSCALE_MAX_INPUT_SECONDS = DEFAULTS.input_max_video_seconds;

/** Each named resolution's frame (landscape; turned for a portrait input): the output fits inside it. */
export const UPSCALE_RESOLUTIONS = {
  '720p': [1280, 720],
  '1080p': [1920, 1080],
  '1440p': [2560, 1440],
  '4k': [3840, 2160],
} as const;
export type UpscaleResolution = keyof typeof UPSCALE_RESOLUTIONS;

/** Without `upscale_factor` or `resolution`, the video is made twice as large. */
export const DEFAULT_UPSCALE_FACTOR = 2;

export const VideoUpscaleRequest = Type.Object(
  {
    video_url: Uri("The video to upscale: an http(s) URL (external or an uploaded asset's URL) or a base64 data URI; MP4, MOV, WebM or Matroska.", {
      examples: ['https://assets.example/input.mp4'],
    }),
    upscale_factor: Type.Optional(
      NumberEnum([1, 2, 4], {
        description:
          'How many times wider and taller the output is than the input (1 re-encodes at the same size). Give this or `resolution`, not both; ' +
          'with neither, 2.',
        examples: [2],
      }),
    ),
    resolution: Type.Optional(
      StringEnum(Object.keys(UPSCALE_RESOLUTIONS) as UpscaleResolution[], {
        description:
          "The output's size class: the input scaled, its aspect ratio kept, to fit 1280x720, 1920x1080, 2560x1440 or 3840x2160 " +
          '(turned for a portrait input). Give this or `upscale_factor`, not both.',
        examples: ['1080p'],
      }),
    ),
    target_fps: Type.Optional(
      Type.Integer({
        minimum: 24,
        maximum: 60,
        description:
          "The output's frame rate, 24 to 60; frames in between the input's are interpolated (motion-compensated). Absent: the input's frame rate is kept.",
        examples: [60],
      }),
    ),
    output_format: Type.Optional(StringEnum(['mp4'], { default: 'mp4', description: 'Container of the output: MP4 (H.264, AAC sound).', examples: ['mp4'] })),
  },
  {
    ...closed,
    // "Exactly one of the two, or neither": both together is a 400 naming them.
    // (Ajv's strict mode wants each required name declared beside it.)
    not: { required: ['upscale_factor', 'resolution'], properties: { upscale_factor: {}, resolution: {} } },
  },
);

/** The rate tier a request is priced by: its factor, or the factor of its resolution's size class. */
function perSecond(rates: Rates, q: PricedRequest): MicroUsd {
  const res = q.resolution as UpscaleResolution | undefined;
  const factor = res === undefined ? Number(q.upscale_factor ?? DEFAULT_UPSCALE_FACTOR) : res === '720p' ? 1 : res === '1080p' ? 2 : 4;
  const tier = factor === 1 ? rates.per_second_same_size! : factor === 2 ? rates.per_second_double! : rates.per_second_quadruple!;
  return tier + (q.target_fps === undefined ? 0 : rates.per_second_interpolation!);
}

export const MODEL_VIDEO_UPSCALE: ModelModule = {
  path: 'enhance/vendor-j/video-upscale',
  summary: 'Upscale a video and interpolate it to a new frame rate, keeping its length and sound',
  kind: 'video',
  tag: 'video enhance',
  request: VideoUpscaleRequest,
  requestName: 'VideoUpscaleRequest',
  aliases: [],
  // The spec shows no price; docs/decisions.md records these, after peers' per-second tiers.
  price: {
    rates: { per_second_same_size: 20_000, per_second_double: 40_000, per_second_quadruple: 80_000, per_second_interpolation: 20_000 },
    unit:
      "per output second (the input video's length): per_second_same_size, per_second_double or per_second_quadruple by upscale_factor " +
      '1, 2 (the default) or 4, or by resolution (720p as 1, 1080p as 2, 1440p and 4k as 4), plus per_second_interpolation when ' +
      'target_fps is given. ' +
      `The price of ${UPSCALE_MAX_INPUT_SECONDS} s (the longest input taken) is held at admission; the completed job is charged its output's ` +
      'measured seconds, rounded up to the micro-USD, and the rest released',
    price: (rates, q) => perSecond(rates, q) * UPSCALE_MAX_INPUT_SECONDS,
    charge: (rates, q, usage) => Math.ceil((perSecond(rates, q) * usage.outputUs) / 1_000_000),
  },
  zeroDataRetention: true,
  engine: 'local',
};
