import { Type } from '@sinclair/typebox';
import type { ModelModule } from '../model.js';
import { closed } from '../schema-kit.js';
import { checkOutputPixels, enhanceFields, perOutputBlock } from './enhance-fields.js';

/**
 * The vendor-j image enhancers: standard-enhance (faithful upscaling with sharpen, denoise and
 * compression repair) and generative-enhance (the same, plus prompt-guided detail with a
 * creativity level). Bodies, prices and the pixel cap: docs/decisions.md.
 */

export const STANDARD_ENHANCE_MODELS = ['Standard V2', 'Low Resolution V2', 'CGI', 'High Fidelity V2', 'Text Refine'] as const;
export const GENERATIVE_ENHANCE_MODELS = ['Redefine', 'Recovery', 'Recovery V2'] as const;

export const StandardEnhanceRequest = Type.Object(
  enhanceFields(
    STANDARD_ENHANCE_MODELS,
    'The enhancement model: `Standard V2` (general purpose), `Low Resolution V2` (small or web images), `CGI` (renders and illustrations), `High Fidelity V2` (already good photos) or `Text Refine` (text and graphics).',
  ),
  closed,
);

export const GenerativeEnhanceRequest = Type.Object(
  {
    ...enhanceFields(
      GENERATIVE_ENHANCE_MODELS,
      'The generative model: `Redefine` (adds new detail, guided by the prompt), `Recovery` or `Recovery V2` (rebuild detail in degraded images).',
    ),
    creativity: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 6,
        default: 3,
        description: 'How much new detail the model may invent, from 1 (faithful) to 6 (free).',
        examples: [4],
      }),
    ),
  },
  closed,
);

export const STANDARD_ENHANCE: ModelModule = {
  path: 'enhance/vendor-j/standard-enhance',
  summary: 'Enhance and upscale an image with standard-enhance',
  kind: 'image',
  tag: 'image enhance',
  request: StandardEnhanceRequest,
  check: checkOutputPixels,
  requestName: 'StandardEnhanceRequest',
  aliases: [],
  // The vendor's credit table: one credit per started 24 output megapixels, about $0.08 each.
  price: perOutputBlock(24, 80_000),
  zeroDataRetention: true,
  engine: 'local',
};

export const GENERATIVE_ENHANCE: ModelModule = {
  path: 'enhance/vendor-j/generative-enhance',
  summary: 'Enhance and upscale an image with generative-enhance, inventing detail',
  kind: 'image',
  tag: 'image enhance',
  request: GenerativeEnhanceRequest,
  check: checkOutputPixels,
  requestName: 'GenerativeEnhanceRequest',
  aliases: [],
  // Generative models cost one credit per started 4 output megapixels.
  price: perOutputBlock(4, 80_000),
  zeroDataRetention: true,
  engine: 'local',
};
