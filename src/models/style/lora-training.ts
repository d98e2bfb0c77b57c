import { Type } from '@sinclair/typebox';
import type { MicroUsd } from '../../domain/money.js';
import type { ModelModule, PricedRequest } from '../model.js';
import { StringEnum, Uri, closed } from '../schema-kit.js';

/**
 * Style (LoRA) training: a job of type `loraTraining`, created at POST /styles/train, whose
 * completion creates a style (docs/styles.md). The body follows the original API's two variants:
 * the flux and wan base models take `learning_rate` and `batch_size`; qwen and z-image name
 * themselves in `model` (the default is flux_dev) and take neither, nor `type: Default`. One
 * schema with the variant rule in `check`, so a refusal names the field instead of a oneOf branch.
 */

export const LORA_TRAINING_PATH = 'loraTraining';
export const STYLES_TRAIN_ROUTE = '/styles/train';

/** Training images per run: the original publishes no bound; 50 covers every dataset its guides suggest. */
export const MAX_TRAINING_IMAGES = 50;
export const DEFAULT_TRAIN_STEPS = 1000;

export const BASE_MODELS = ['flux_dev', 'flux_schnell', 'wan', 'wan22', 'qwen', 'z-image'] as const;
export type BaseModel = (typeof BASE_MODELS)[number];
/** The base models of the second variant: `model` named, no learning_rate or batch_size, no `Default` type. */
const WITHOUT_TUNING: readonly string[] = ['qwen', 'z-image'];
export const TRAINING_TYPES = ['Style', 'Object', 'Character', 'Default'] as const;

export const StyleTrainingRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: "The style's name, 1 to 200 characters; it becomes the style's title.", examples: ['Ink wash'] }),
    urls: Type.Array(
      Uri("A training image: an http(s) URL (external or an uploaded asset's URL) or a base64 data URI.", {
        examples: ['https://assets.example/style-1.png'],
      }),
      {
        minItems: 1,
        maxItems: MAX_TRAINING_IMAGES,
        description: `The training images, 1 to ${MAX_TRAINING_IMAGES}.`,
        examples: [['https://assets.example/style-1.png', 'https://assets.example/style-2.png']],
      },
    ),
    model: Type.Optional(
      StringEnum(BASE_MODELS, {
        default: 'flux_dev',
        description: 'The base model the style is trained for. qwen and z-image take no learning_rate or batch_size, and no type Default.',
        examples: ['flux_dev'],
      }),
    ),
    type: Type.Optional(
      StringEnum(TRAINING_TYPES, {
        description: 'What the images have in common, which sets the training defaults: Default when absent (Style for qwen and z-image).',
        examples: ['Style'],
      }),
    ),
    trigger_word: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'A word that calls the style up in a prompt, 1 to 100 characters.', examples: ['inkwash'] }),
    ),
    learning_rate: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Learning rate, above 0 and at most 1 (flux and wan base models only).', examples: [0.0001] }),
    ),
    max_train_steps: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2000,
        default: DEFAULT_TRAIN_STEPS,
        description: 'Training steps, from 1 to 2000; the price is per step.',
        examples: [500],
      }),
    ),
    batch_size: Type.Optional(Type.Integer({ minimum: 1, description: 'Images per training step, at least 1 (flux and wan base models only).', examples: [2] })),
  },
  closed,
);

/** The original's two variants, once the schema (and its defaults) passed. */
function checkVariant(r: PricedRequest): string | undefined {
  const model = r.model as string;
  if (!WITHOUT_TUNING.includes(model)) return undefined;
  for (const field of ['learning_rate', 'batch_size']) {
    if (r[field] !== undefined) return `'${field}' is not taken when 'model' is ${model}; only flux_dev, flux_schnell, wan and wan22 take it`;
  }
  if (r.type === 'Default') return `'type' must be one of "Style", "Object", "Character" when 'model' is ${model}`;
  return undefined;
}

/** A rate name per base model: `per_step_z_image` (rate names are snake_case words). */
const rateName = (model: string) => `per_step_${model.replace(/-/g, '_')}`;

/**
 * Per training step, by base model: in the proportions of the original's published compute units
 * per step (qwen ~8.3, wan22 ~5.3, flux_schnell and wan ~3.4, flux_dev ~3.0, z-image ~2.4), at
 * $0.0001 a unit: 1000 flux_dev steps cost $0.30 (docs/billing.md).
 */
const RATES: Readonly<Record<string, MicroUsd>> = Object.freeze(
  Object.fromEntries(
    (
      [
        ['flux_dev', 300],
        ['flux_schnell', 340],
        ['wan', 340],
        ['wan22', 530],
        ['qwen', 830],
        ['z-image', 240],
      ] as const
    ).map(([m, micros]) => [rateName(m), micros]),
  ),
);

export const LORA_TRAINING: ModelModule = {
  path: LORA_TRAINING_PATH,
  route: STYLES_TRAIN_ROUTE,
  makesStyle: true,
  summary: 'Train a style (LoRA) from images',
  kind: 'image',
  tag: 'styles',
  request: StyleTrainingRequest,
  requestName: 'StyleTrainingRequest',
  check: checkVariant,
  aliases: [],
  price: {
    rates: RATES,
    unit: `per training step: max_train_steps (default ${DEFAULT_TRAIN_STEPS}) times the rate of the base model, per_step_<model> (z-image: per_step_z_image)`,
    // A validated request has both (defaults applied); a partial one is priced as their defaults.
    price: (rates, q) => rates[rateName((q.model as string | undefined) ?? 'flux_dev')]! * ((q.max_train_steps as number | undefined) ?? DEFAULT_TRAIN_STEPS),
  },
  zeroDataRetention: false,
  engine: 'local',
};
