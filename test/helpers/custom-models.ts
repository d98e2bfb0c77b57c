import { readFileSync } from 'node:fs';

/**
 * Custom model declarations for tests: the two of examples/python-worker/mediagen.json (so the
 * example stays a valid config), and a video model with a media URL input.
 */

export const GRADIENT = 'image/acme/gradient-v1';
export const TONE = 'audio/acme/tone-v1';
export const MORPH = 'video/acme/morph-v1';

const example = JSON.parse(readFileSync(new URL('../../examples/python-worker/mediagen.json', import.meta.url), 'utf8')) as { models: Record<string, unknown>[] };

/** The example config's `models`: the gradient image model and the tone audio model, both on `remote:python`. */
export const EXAMPLE_MODELS: readonly Record<string, unknown>[] = example.models;

/** A video model taking an image by URL (`format: media-url`), priced per second, on `remote:gpu`. */
export const MORPH_MODEL: Record<string, unknown> = {
  path: MORPH,
  kind: 'video',
  request: {
    type: 'object',
    properties: {
      image_url: { type: 'string', format: 'media-url', description: 'The image the video starts from.' },
      seconds: { type: 'integer', minimum: 1, maximum: 10, description: 'Length of the video in seconds.' },
      style: { anyOf: [{ type: 'string', maxLength: 40 }, { type: 'null' }], description: 'A style name, or null.' },
    },
    required: ['image_url', 'seconds'],
  },
  price: { per_second: '0.05', field: 'seconds' },
  engine: 'remote:gpu',
  timeout_ms: 600_000,
};

/** Every custom model above. */
export const CUSTOM_MODELS: readonly Record<string, unknown>[] = [...EXAMPLE_MODELS, MORPH_MODEL];
