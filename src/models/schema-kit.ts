import { Type } from '@sinclair/typebox';
import type { SchemaOptions, TSchema, TUnsafe } from '@sinclair/typebox';

/** A string enum as plain JSON Schema `enum`, which reads better in OpenAPI than anyOf/const. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function NumberEnum<const T extends readonly number[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'number', enum: [...values], ...options });
}

/**
 * `schema` or null. The union carries the inner schema's description and examples (unless
 * `options` gives its own), since the union is what a client generator documents the field by.
 */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  const { description, examples } = schema as SchemaOptions;
  return Type.Union([schema, Type.Null()], {
    ...(description === undefined ? {} : { description }),
    ...(examples === undefined ? {} : { examples }),
    ...options,
  });
}

/** For request objects: unknown properties are an error, never silently dropped. */
export const closed = { additionalProperties: false } as const;

/**
 * What an input URL may be: an http(s) URL with a host (external or an uploaded asset's URL) or a
 * base64 data URI, the forms the engine can fetch or decode. Other schemes (file:, gopher:, ...)
 * are refused at the door rather than when the job runs.
 */
export const MEDIA_URL_PATTERN =
  '^(?:[hH][tT][tT][pP][sS]?://[^\\s/?#@]+(?:[/?#]\\S*)?|[dD][aA][tT][aA]:[^\\s,]*;base64,[A-Za-z0-9+/=]*)$';

/** The aspect ratios the video models share. */
export const VideoAspect = (options: SchemaOptions = {}) =>
  StringEnum(['16:9', '9:16', '1:1'], {
    default: '16:9',
    description: 'Aspect ratio of the video.',
    examples: ['9:16'],
    ...options,
  });

/** An example input URL, for fields whose own example would say nothing more. */
export const EXAMPLE_MEDIA_URL = 'https://assets.example/input.png';

/**
 * A media input URL field (MEDIA_URL_PATTERN). Each use describes its own field; the example is
 * a generic image URL unless `options.examples` gives a better one.
 */
export const Uri = (description: string, options: SchemaOptions = {}) =>
  Type.String({ format: 'uri', pattern: MEDIA_URL_PATTERN, description, examples: [EXAMPLE_MEDIA_URL], ...options });

/** The video models' `start_image`. */
export const START_IMAGE_DESCRIPTION =
  "Image the video starts from (its first frame): an http(s) URL (external or an uploaded asset's URL) or a base64 data URI.";
