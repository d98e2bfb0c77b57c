import { describe, expect, it } from 'vitest';
import { checkDescription, checkExampleOutputs, checkSchema, checkSlug } from '../../src/services/node-apps/node-app-rules.js';

describe('node app slugs', () => {
  it.each([
    ['Upscaler Pro', 'upscaler-pro'],
    ['  --Upscaler   Pro!! v2-- ', 'upscaler-pro-v2'],
    ['Ça va? 100%', 'a-va-100'],
    ['ALL_CAPS_name', 'all-caps-name'],
  ])('the name %j makes the slug %j', (name, slug) => {
    expect(checkSlug(undefined, name)).toBe(slug);
  });

  it('a slug made from a long name is cut to 100 characters without a trailing hyphen', () => {
    const slug = checkSlug(undefined, `${'a'.repeat(99)} bcd`);
    expect(slug).toBe('a'.repeat(99));
    expect(checkSlug(undefined, 'x'.repeat(150))).toHaveLength(100);
  });

  it('a name with no letter a-z or digit cannot make a slug', () => {
    expect(() => checkSlug(undefined, '日本語 !!')).toThrow(/give a slug/);
  });

  it.each(['my-app', 'a', 'app-2-b', 'x'.repeat(100)])('the slug %j is accepted as given', (slug) => {
    expect(checkSlug(slug, 'ignored')).toBe(slug);
  });

  it.each(['', 'My-App', 'my_app', '-app', 'app-', 'my--app', 'my app', 'x'.repeat(101)])('the slug %j is refused', (slug) => {
    expect(() => checkSlug(slug, 'name')).toThrow(/slug must be/);
  });
});

describe('node app schemas', () => {
  it('keeps every key as given and adds required: [] only when absent', () => {
    const given = { title: 'T', type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
    expect(checkSchema(given, 's')).toEqual({ ...given, required: [] });
    const withRequired = { type: 'object', properties: {}, required: ['a'], 'x-extra': [1] };
    expect(checkSchema(withRequired, 's')).toEqual(withRequired);
  });

  it.each([
    [null, 'must be a JSON object'],
    [[], 'must be a JSON object'],
    [{ properties: {} }, "'type' must be a string"],
    [{ type: 1, properties: {} }, "'type' must be a string"],
    [{ type: 'object' }, "'properties' must be an object"],
    [{ type: 'object', properties: [] }, "'properties' must be an object"],
    [{ type: 'object', properties: {}, required: [1] }, "'required' must be an array of strings"],
    [{ type: 'object', properties: {}, required: null }, "'required' must be an array of strings"],
  ])('%j is refused: %s', (value, message) => {
    expect(() => checkSchema(value, 'input schema')).toThrow(`input schema${message.startsWith('must') ? ' ' : ': '}${message}`);
  });
});

describe('node app descriptions and example outputs', () => {
  it('a description defaults to empty and may have up to 2000 characters', () => {
    expect(checkDescription(undefined)).toBe('');
    expect(checkDescription('d'.repeat(2000))).toHaveLength(2000);
    expect(() => checkDescription('d'.repeat(2001))).toThrow(/at most 2000 characters/);
  });

  it('example outputs accept absolute http(s) URLs and refuse the rest', () => {
    expect(checkExampleOutputs(['https://cdn.test/a.png', 'HTTP://cdn.test/b?x=1#y'])).toHaveLength(2);
    for (const bad of ['data:image/png;base64,AAAA', 'https://', 'http://@/x', 'javascript:alert(1)', 'https://cdn.test/é.png']) {
      expect(() => checkExampleOutputs([bad]), bad).toThrow(/not an absolute http or https URL/);
    }
  });
});
