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

/** A request body: unknown properties are an error, never silently dropped. */
export const Body = Type.Object;
export const closed = { additionalProperties: false } as const;

/** An absolute URI: an external URL, a base64 data URI or an uploaded-asset URL. */
export const Uri = (options: SchemaOptions = {}) => Type.String({ format: 'uri', ...options });
