import { Type } from '@sinclair/typebox';
import type { ModelModule } from '../model.js';
import { StringEnum, closed } from '../schema-kit.js';

/**
 * audio/vendor-l/model-l-1: audio (music, ambience) from a text prompt. The original API publishes
 * no audio endpoint (docs.krea.ai lists audio only as workflow nodes), so the body keeps the
 * issue's names and docs/decisions.md records the range and the rate.
 */

export const MODEL_L1_MIN_SECONDS = 1;
export const MODEL_L1_MAX_SECONDS = 120;
export const MODEL_L1_DEFAULT_SECONDS = 10;

export const ModelL1Request = Type.Object(
  {
    prompt: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'Text describing the audio to generate (mood, instruments, tempo, sounds), 1 to 2000 characters.',
      examples: ['Calm lo-fi piano with soft rain, slow tempo'],
    }),
    duration: Type.Optional(
      Type.Integer({
        minimum: MODEL_L1_MIN_SECONDS,
        maximum: MODEL_L1_MAX_SECONDS,
        default: MODEL_L1_DEFAULT_SECONDS,
        description: `Length of the audio in whole seconds, from ${MODEL_L1_MIN_SECONDS} to ${MODEL_L1_MAX_SECONDS}; the price is per second.`,
        examples: [30],
      }),
    ),
    output_format: Type.Optional(
      StringEnum(['mp3', 'wav'], {
        default: 'mp3',
        description: 'File format: `mp3` (MPEG-1 Layer III, 192 kbit/s) or `wav` (16-bit PCM). Both are 44.1 kHz stereo.',
        examples: ['wav'],
      }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4_294_967_295,
        description: 'Seed for reproducible output: the same prompt and seed give the same audio.',
        examples: [42],
      }),
    ),
  },
  closed,
);

export const MODEL_L1: ModelModule = {
  path: 'audio/vendor-l/model-l-1',
  summary: 'Generate audio with model-l-1',
  kind: 'audio',
  tag: 'audio generation',
  request: ModelL1Request,
  requestName: 'ModelL1Request',
  aliases: [],
  price: {
    rates: { per_second: 2_000 },
    unit: 'per second of duration',
    price: (r, q) => r.per_second! * Number(q.duration ?? MODEL_L1_DEFAULT_SECONDS),
  },
  zeroDataRetention: true,
  engine: 'local',
};
