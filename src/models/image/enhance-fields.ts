import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { PriceRule, PricedRequest } from '../model.js';
import { StringEnum, Uri } from '../schema-kit.js';

/**
 * The body the vendor-j enhancers share (standard-enhance and generative-enhance), following the
 * original API's enhance endpoints: the same image, size, format and filter fields, each model
 * adding its own `model` list (and generative-enhance its `creativity`). docs/decisions.md records
 * the choices the original leaves open.
 */

/**
 * Most output pixels one request may ask for, width x height: 64 megapixels (8000 x 8000). The
 * original's vendor accepts more (hundreds of megapixels); this server renders on its own CPU, and
 * 64 MP is the last step of the vendor's published price table that a job can finish within the
 * default job timeout.
 */
export const MAX_OUTPUT_PIXELS = 64_000_000;

export const ENHANCE_OUTPUT_FORMATS = ['png', 'jpg', 'webp'] as const;
export type EnhanceOutputFormat = (typeof ENHANCE_OUTPUT_FORMATS)[number];

export const SUBJECT_DETECTION = ['all', 'foreground', 'background'] as const;

const side = (what: 'Width' | 'Height', example: number) =>
  Type.Integer({
    minimum: 1,
    maximum: 32000,
    description: `${what} of the output image in pixels, from 1 to 32000; width x height may be at most ${MAX_OUTPUT_PIXELS.toLocaleString('en-US')} pixels (64 megapixels).`,
    examples: [example],
  });

const amount = (what: string, example: number) =>
  Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description: `${what}, from 0 (off) to 1; absent: the chosen model's own setting.`,
      examples: [example],
    }),
  );

const unit = (description: string, example: number, fallback: number) =>
  Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: fallback, description, examples: [example] }));

/**
 * The shared fields, with `model` restricted to `models` (the first is the example). Spread into
 * each model's Type.Object, so one change here changes both bodies.
 */
export function enhanceFields<const M extends readonly string[]>(models: M, modelDescription: string) {
  return {
    image_url: Uri("The image to enhance: an http(s) URL (external or an uploaded asset's URL) or a base64 data URI, at most 1024 characters.", {
      maxLength: 1024,
    }),
    width: side('Width', 2048),
    height: side('Height', 1536),
    model: StringEnum(models, { description: modelDescription, examples: [models[0]] }),
    output_format: Type.Optional(
      StringEnum(ENHANCE_OUTPUT_FORMATS, { default: 'jpg', description: 'File format of the enhanced image: `png`, `jpg` or `webp`.', examples: ['png'] }),
    ),
    prompt: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Text describing the image, at most 1024 characters.', examples: ['A sharp product photo of a leather boot'] }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4294967295,
        description: 'Seed for reproducible output, from 0 to 4294967295: the same seed with the same request gives the same image.',
        examples: [42],
      }),
    ),
    sharpen: amount('How much to sharpen', 0.4),
    denoise: amount('How much noise to remove', 0.3),
    fix_compression: amount('How much to repair compression artifacts (JPEG blocking)', 0.5),
    strength: Type.Optional(
      Type.Number({
        minimum: 0.01,
        maximum: 1,
        default: 1,
        description: 'Overall strength of the enhancement, from 0.01 to 1: scales sharpen, denoise and fix_compression.',
        examples: [0.8],
      }),
    ),
    face_enhancement: Type.Optional(Type.Boolean({ default: false, description: 'Whether faces are enhanced as well.', examples: [true] })),
    face_enhancement_creativity: unit('Face enhancement: from 0 (realistic) to 1 (creative); ignored unless face_enhancement is true.', 0.2, 0),
    face_enhancement_strength: unit('Face enhancement: how sharp faces are relative to the rest, from 0 to 1; ignored unless face_enhancement is true.', 0.8, 0.8),
    subject_detection: Type.Optional(
      StringEnum(SUBJECT_DETECTION, { default: 'all', description: 'Where the enhancement applies: `all`, the `foreground` subject or the `background`.', examples: ['foreground'] }),
    ),
    crop_to_fill: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'When the output aspect ratio differs from the input: true crops the image to fill width x height; false fits it whole inside and fills the rest with black.',
        examples: [true],
      }),
    ),
    upscaling_activated: Type.Optional(
      Type.Boolean({ default: true, description: 'Whether the image is upscaled; width and height give the output size either way.', examples: [true] }),
    ),
    image_scaling_factor: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 32,
        description: 'The scale the client chose width and height by, from 1 to 32; width and height give the output size.',
        examples: [2],
      }),
    ),
  } satisfies Record<string, TSchema>;
}

const pixelsOf = (request: PricedRequest): number => {
  const { width, height } = request;
  return typeof width === 'number' && typeof height === 'number' ? width * height : 0;
};

/** The output pixel cap, which JSON Schema cannot state (a product of two fields). */
export function checkOutputPixels(request: PricedRequest): string | undefined {
  const pixels = pixelsOf(request);
  if (pixels > MAX_OUTPUT_PIXELS) {
    return `'width' x 'height' must be at most ${MAX_OUTPUT_PIXELS.toLocaleString('en-US')} pixels (64 megapixels); ${String(request.width)} x ${String(request.height)} is ${pixels.toLocaleString('en-US')}`;
  }
  // The WebP format itself stores at most 16383 pixels a side: refused here, not after the render.
  if (request.output_format === 'webp' && Math.max(Number(request.width), Number(request.height)) > MAX_WEBP_SIDE) {
    return `'width' and 'height' must be at most ${MAX_WEBP_SIDE} with output_format 'webp' (the format's limit); use png or jpg for ${String(request.width)} x ${String(request.height)}`;
  }
  return undefined;
}

/** The WebP format's largest side, in pixels. */
export const MAX_WEBP_SIDE = 16383;

/**
 * The vendor's rule for both enhancers: `per_block` for each started block of `megapixels` output
 * megapixels (width x height / 1,000,000), at least one block.
 */
export function perOutputBlock(megapixels: number, micros: number): PriceRule {
  return {
    rates: { per_block: micros },
    unit: `per request: per_block for each started ${megapixels} megapixels of output (width x height / 1,000,000, rounded up; at least one block)`,
    price: (r, q) => r.per_block! * Math.max(1, Math.ceil(pixelsOf(q) / (megapixels * 1_000_000))),
  };
}
