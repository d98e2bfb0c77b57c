/**
 * An example value for a JSON Schema, for the OpenAPI document: the schema's own `examples[0]`,
 * else its `default`, `const` or first `enum` value, else one built from its type and format.
 * Objects get their required properties only, so a built request example is the smallest valid
 * request (a test checks each against its schema).
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Names whose made-up example would read oddly as a generic string. */
const NAMED: Readonly<Record<string, string>> = {
  prompt: 'A red fox in fresh snow at golden hour',
  id: 'style-7f3a',
};

const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  uri: 'https://assets.example/input.png',
  uuid: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  'date-time': '2026-11-22T12:00:00Z',
  date: '2026-11-22',
};

export function exampleOf(schema: unknown, lookup: (ref: string) => unknown, name?: string, depth = 0): unknown {
  if (!isObject(schema) || depth > 8) return undefined;
  if (typeof schema.$ref === 'string') return exampleOf(lookup(schema.$ref), lookup, name, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      const first = branches.find((b) => !(isObject(b) && b.type === 'null')) ?? branches[0];
      return exampleOf(first, lookup, name, depth + 1);
    }
  }
  switch (schema.type) {
    case 'object': {
      const props = (isObject(schema.properties) ? schema.properties : {}) as Json;
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((p) => [p, exampleOf(props[p], lookup, p, depth + 1)]));
    }
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0 ? [exampleOf(schema.items, lookup, name, depth + 1)] : [];
    case 'string':
      return (typeof schema.format === 'string' ? FORMAT_EXAMPLES[schema.format] : undefined) ?? (name && NAMED[name]) ?? 'text';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 0) : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return undefined;
  }
}
