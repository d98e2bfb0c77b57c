import { sampleOf } from '../../lib/json-schema-sample.js';

/**
 * An example value for a JSON Schema, for the OpenAPI document: the schema's own `examples[0]`,
 * else its `default`, `const` or first `enum` value, else one built from its type and format
 * (lib/json-schema-sample.ts, the generator node-app publishing uses too). Objects get their
 * required properties only, so a built request example is the smallest valid request (a test
 * checks each against its schema).
 */

/** Names whose made-up example would read oddly as a generic string. */
const NAMES: Readonly<Record<string, string>> = {
  prompt: 'A red fox in fresh snow at golden hour',
  id: 'style-7f3a',
};

export function exampleOf(schema: unknown, lookup: (ref: string) => unknown): unknown {
  return sampleOf(schema, { lookup, prefer: 'examples', names: NAMES });
}
