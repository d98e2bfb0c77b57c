import { describe, expect, it } from 'vitest';
import { representative } from '../../src/services/node-apps/node-app-graph-check.js';

/** The value an input stands for while a graph step's body is checked at publish (docs/node-apps.md). */
describe("an input's representative value", () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['its default first', { type: 'string', default: 'd', enum: ['e'], example: 'x' }, 'd'],
    ['its const', { const: 7 }, 7],
    ['its first enum value', { type: 'integer', enum: [4, 2] }, 4],
    ['its example', { type: 'string', example: 'a fox' }, 'a fox'],
    ['its first examples entry', { type: 'string', examples: ['a cat', 'a dog'] }, 'a cat'],
    ['a null default, kept', { type: ['string', 'null'], default: null }, null],
  ])('is %s', (_, input, value) => {
    expect(representative(input, { enum: ['from the field'] })).toEqual(value);
  });

  it("is else the value the body field it fills names, when the input's type allows it", () => {
    expect(representative({ type: 'string' }, { type: 'string', enum: ['16:9', '1:1'] })).toBe('16:9');
    expect(representative({}, { type: 'number', default: 5 })).toBe(5);
    expect(representative({ type: ['integer', 'null'] }, { examples: [10] })).toBe(10);
    expect(representative({ type: 'integer' }, { type: 'string', examples: ['https://a.test/x.png'] })).toBe(1);
    expect(representative({ type: 'integer' }, { type: 'number', default: 0.5 })).toBe(1);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['a string', { type: 'string' }, 'x'],
    ['a string of the least length', { type: 'string', minLength: 3 }, 'xxx'],
    ['an https URL for a URI', { type: 'string', format: 'uri' }, 'https://example.com/input.png'],
    ['a date-time', { type: 'string', format: 'date-time' }, '2026-01-01T00:00:00Z'],
    ['a string when no type is given', {}, 'x'],
    ['1 for a number', { type: 'number' }, 1],
    ['the minimum above 1', { type: 'integer', minimum: 4, maximum: 9 }, 4],
    ['the maximum below 1', { type: 'number', minimum: -1, maximum: 0.25 }, 0.25],
    ['inside an exclusive minimum', { type: 'integer', exclusiveMinimum: 5 }, 6],
    ['inside an exclusive maximum', { type: 'integer', exclusiveMaximum: 0 }, -1],
    ['false for a boolean', { type: 'boolean' }, false],
    ['the first non-null type', { type: ['null', 'number'] }, 1],
    ['null for null', { type: 'null' }, null],
    ['an array of the least items', { type: 'array', items: { type: 'string', format: 'uri' }, minItems: 2 }, ['https://example.com/input.png', 'https://example.com/input.png']],
    ['one item without a minimum', { type: 'array', items: { type: 'integer', enum: [3] } }, [3]],
    ['an empty array when none may be given', { type: 'array', maxItems: 0 }, []],
    ['an object of its required properties', { type: 'object', properties: { id: { type: 'string' }, w: { type: 'number' } }, required: ['w'] }, { w: 1 }],
    ['the first branch of anyOf', { anyOf: [{ type: 'boolean' }, { type: 'string' }] }, false],
  ])('is else a sample of its type: %s', (_, input, value) => {
    expect(representative(input, undefined)).toEqual(value);
  });
});
