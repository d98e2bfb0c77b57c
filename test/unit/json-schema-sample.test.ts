import { describe, expect, it } from 'vitest';
import { namedValue, sampleOf } from '../../src/lib/json-schema-sample.js';

describe('a sample of a JSON Schema', () => {
  it("is a value the schema names, default first or examples first as asked", () => {
    const s = { type: 'string', default: 'd', enum: ['e'], examples: ['x1'] };
    expect(sampleOf(s)).toBe('d');
    expect(sampleOf(s, { prefer: 'examples' })).toBe('x1');
    expect(namedValue({ type: 'string' })).toBeUndefined();
  });

  it('else a value of its type within its bounds, objects with their required properties only', () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: 'integer', exclusiveMinimum: 3 },
        x: { type: 'number', maximum: 0.5 },
        s: { type: 'string', minLength: 3 },
        u: { type: 'string', format: 'uri' },
        a: { type: 'array', items: { type: 'boolean' }, minItems: 2 },
        o: { anyOf: [{ type: 'null' }, { type: 'string' }] },
        optional: { type: 'string' },
      },
      required: ['n', 'x', 's', 'u', 'a', 'o'],
    };
    expect(sampleOf(schema)).toEqual({ n: 4, x: 0.5, s: 'xxx', u: 'https://example.com/input.png', a: [false, false], o: 'x' });
  });

  it("follows a $ref through the lookup, and names a string by its property where asked", () => {
    const lookup = (ref: string) => (ref === '#/c/Req' ? { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] } : undefined);
    expect(sampleOf({ $ref: '#/c/Req' }, { lookup, names: { prompt: 'a fox' } })).toEqual({ prompt: 'a fox' });
  });
});
