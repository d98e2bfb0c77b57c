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

export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], options);
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
export const VideoAspect = StringEnum(['16:9', '9:16', '1:1'], { default: '16:9' });

export const Uri = (options: SchemaOptions = {}) =>
  Type.String({ format: 'uri', pattern: MEDIA_URL_PATTERN, ...options });
