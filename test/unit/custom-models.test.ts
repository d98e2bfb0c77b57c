import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceTableFor, runPolicyFor } from '../../src/app/settings.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { readCustomModels } from '../../src/config/custom-model-settings.js';
import { buildBindings } from '../../src/engines/bindings.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { modelsWith } from '../../src/models/custom-models.js';
import { ceilProduct } from '../../src/models/custom-prices.js';
import { urlFieldsOf } from '../../src/models/private-urls.js';
import { MEDIA_URL_PATTERN } from '../../src/models/schema-kit.js';
import { CUSTOM_MODELS, GRADIENT, MORPH, MORPH_MODEL, TONE } from '../helpers/custom-models.js';

const file = (content: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'mediagen-cfg-')), 'config.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
};

/** A valid declaration to vary: a fixed-price image model on remote:gpu. */
const base = (): Record<string, unknown> => ({
  path: 'image/acme/portrait-v2',
  kind: 'image',
  request: {
    type: 'object',
    properties: {
      prompt: { type: 'string', maxLength: 500, description: 'What to draw.' },
      width: { type: 'integer', minimum: 64, maximum: 2048, default: 512, description: 'Width in pixels.' },
      height: { type: 'integer', minimum: 64, maximum: 2048, default: 512, description: 'Height in pixels.' },
    },
    required: ['prompt'],
  },
  price: { fixed: '0.01' },
  engine: 'remote:gpu',
});

const withBase = (change: (d: Record<string, unknown>) => void) => {
  const d = base();
  change(d);
  return d;
};

const request = (d: Record<string, unknown>) => d.request as { properties: Record<string, Record<string, unknown>>; [k: string]: unknown };

/** The declarations read as the config file's `models` and built into the catalog's models. */
const build = (...decls: unknown[]) => modelsWith(readCustomModels(decls, 'c.json'));

describe('the config file\'s models: shape', () => {
  it('reads a declaration into its parts', () => {
    const config = loadConfig({ env: {}, configFile: file({ models: [base()] }) });
    expect(config.models).toEqual([
      expect.objectContaining({ where: 'models[0] (image/acme/portrait-v2)', path: 'image/acme/portrait-v2', kind: 'image', price: { rule: 'fixed', rate: 10_000 }, engine: { engines: ['remote:gpu'] }, zeroDataRetention: false }),
    ]);
  });

  const one = (change: Record<string, unknown>) => [{ ...base(), ...change }];
  it.each([
    ['not an array', {}, 'config.json: models must be an array'],
    ['a path with capitals', one({ path: 'image/Acme/x' }), 'config.json: models[0].path must be <kind>/<vendor>/<name>[/<variant>]'],
    ['a path of two segments', one({ path: 'image/x' }), 'models[0].path must be'],
    ['a path of five segments', one({ path: 'image/a/b/c/d' }), 'models[0].path must be'],
    ['a path with a dot segment', one({ path: 'image/acme/..' }), 'models[0].path must be'],
    ['an unknown key', one({ colour: 'red' }), "config.json: models[0] (image/acme/portrait-v2): unknown key 'colour'"],
    ['no engine', one({ engine: undefined }), "models[0] (image/acme/portrait-v2): missing 'engine'"],
    ['a request that is no object', one({ request: [] }), 'models[0] (image/acme/portrait-v2).request must be a JSON Schema object'],
    ['two rates', one({ price: { fixed: '0.01', per_output: '0.01' } }), '.price must name exactly one rate'],
    ['no rate', one({ price: {} }), '.price must name exactly one rate (fixed, per_second, per_megapixel, per_output)'],
    ['a rate that is not USD', one({ price: { fixed: '-1' } }), '.price.fixed must be a USD amount such as "0.035"'],
    ['a rate with 7 places', one({ price: { fixed: '0.0000001' } }), 'at most 6 decimal places'],
    ['a per-second rate without its field', one({ price: { per_second: '0.01' } }), '.price.field must name a property of the request schema'],
    ['a key the rule does not take', one({ price: { fixed: '0.01', field: 'width' } }), ".price: unknown key 'field'"],
    ['a timeout out of bounds', one({ timeout_ms: 10 }), '.timeout_ms must be an integer from 1000 to 86400000'],
    ['a bad deprecation date', one({ deprecation: { sunset_date: 'soon' } }), '.deprecation.sunset_date must be a date'],
    ['an empty output list', one({ output: { content_types: [] } }), '.output.content_types must be a non-empty array'],
    ['zero data retention as text', one({ zero_data_retention: 'yes' }), '.zero_data_retention must be true or false'],
  ])('refuses %s', (_name, models, message) => {
    const load = () => loadConfig({ env: {}, configFile: file({ models }) });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
  });
});

describe('the config file\'s models: building them', () => {
  it.each([
    ['a built-in path', withBase((d) => (d.path = 'image/vendor-b/model-b-1')), 'models[0] (image/vendor-b/model-b-1): image/vendor-b/model-b-1 is a built-in model'],
    ['an unknown kind', withBase((d) => ((d.kind = 'text'), (d.path = 'text/acme/x'))), "models[0] (text/acme/x).kind: 'text' is not a kind; the kinds are image, video, audio, 3d"],
    ['a path not under its kind', withBase((d) => (d.kind = 'video')), 'models[0] (image/acme/portrait-v2).path must start with its kind: video/<vendor>/<name>'],
    ['an output type of another kind', withBase((d) => (d.output = { content_types: ['video/mp4'] })), "models[0] (image/acme/portrait-v2).output.content_types: 'video/mp4' is not an output type of kind image"],
    ['a request that is not an object schema', withBase((d) => (request(d).type = 'array')), 'models[0] (image/acme/portrait-v2).request.type: must be "object"'],
    ['a field without a type', withBase((d) => delete request(d).properties.width!.type), "models[0] (image/acme/portrait-v2).request.properties.width: needs a 'type'"],
    ['a field of an unknown type', withBase((d) => (request(d).properties.width!.type = 'int')), 'models[0] (image/acme/portrait-v2).request.properties.width.type: must be one of string'],
    ['a keyword outside the subset', withBase((d) => (request(d).properties.prompt!.$ref = '#/x')), "models[0] (image/acme/portrait-v2).request.properties.prompt.$ref: keyword not supported"],
    ['a keyword of another type', withBase((d) => (request(d).properties.width!.maxLength = 3)), 'request.properties.width.maxLength: keyword not supported for type integer'],
    ['a bound that is not a number', withBase((d) => (request(d).properties.width!.maximum = '2048')), 'request.properties.width.maximum: must be a number'],
    ['a field without a description', withBase((d) => delete request(d).properties.prompt!.description), 'request.properties.prompt: needs a description'],
    ['a bad pattern', withBase((d) => (request(d).properties.prompt!.pattern = '(')), 'request.properties.prompt.pattern: is not a regular expression'],
    ['an unknown format', withBase((d) => (request(d).properties.prompt!.format = 'colour')), "request.properties.prompt.format: unknown format 'colour'"],
    ['a media-url field that is not a string', withBase((d) => (request(d).properties.width!.format = 'media-url')), "request.properties.width.format: keyword not supported for type integer"],
    ['a required field that is not a property', withBase((d) => (request(d).required = ['prompt', 'seed'])), "request.required: names 'seed', which is not in properties"],
    ['additional properties allowed', withBase((d) => (request(d).additionalProperties = true)), 'request.additionalProperties: must be false or left out'],
    ['a default that breaks its own field', withBase((d) => (request(d).properties.width!.default = 8)), 'request.properties.width.default: 8 is not valid for the field: must be >= 64'],
    ['an example that breaks its own field', withBase((d) => (request(d).properties.width!.examples = [4096])), 'request.properties.width.examples[0]: 4096 is not valid for the field: must be <= 2048'],
    ['an item example that breaks its own schema', withBase((d) => (request(d).properties.tags = { type: 'array', description: 'Tags.', items: { type: 'string', maxLength: 3, examples: ['long'] } })), 'request.properties.tags.items.examples[0]: "long" is not valid for the field: must NOT have more than 3 characters'],
    ['a field no example can be made up for', withBase((d) => (request(d).properties.prompt!.pattern = '^[0-9]+$')), 'request.properties.prompt: give it an example'],
    ['another dialect', withBase((d) => (request(d).$schema = 'https://json-schema.org/draft/2020-12/schema')), 'request.$schema: request schemas are JSON Schema draft-07'],
    ['a price field that is not a property', withBase((d) => (d.price = { per_second: '0.01', field: 'duration' })), "models[0] (image/acme/portrait-v2).price.field: 'duration' is not a property of the request schema"],
    ['a price field that is not a number', withBase((d) => (d.price = { per_second: '0.01', field: 'prompt' })), "price.field: 'prompt' must have \"type\": \"integer\" or \"number\""],
    ['a price field without a maximum', withBase((d) => (delete request(d).properties.height!.maximum, (d.price = { per_megapixel: '0.01', width_field: 'width', height_field: 'height' }))), "price.height_field: 'height' needs a \"maximum\""],
    ['a price field that may be negative', withBase((d) => ((request(d).properties.width!.minimum = -1), (d.price = { per_second: '0.01', field: 'width' }))), "price.field: 'width' needs a \"minimum\" of at least 0"],
    ['a price field neither required nor defaulted', withBase((d) => (delete request(d).properties.width!.default, (d.price = { per_second: '0.01', field: 'width' }))), "price.field: 'width' must be required or have a default"],
    ['a count field that is a number', withBase((d) => ((request(d).properties.width!.type = 'number'), (d.price = { per_output: '0.01', count_field: 'width' }))), "price.count_field: 'width' must have \"type\": \"integer\""],
    ['a price past any amount', withBase((d) => ((request(d).properties.width!.maximum = 1e12), (request(d).properties.height!.maximum = 1e12), (d.price = { per_megapixel: '1000', width_field: 'width', height_field: 'height' }))), 'price: the most a request can cost'],
  ])('refuses %s, naming the model and the field', (_name, decl, message) => {
    expect(() => build(decl)).toThrow(ConfigError);
    expect(() => build(decl)).toThrow(message);
  });

  it('takes a deprecation, which the config file\'s deprecations may replace', () => {
    const models = build(withBase((d) => (d.deprecation = { sunset_date: '2027-01-01', replacement: 'image/acme/portrait-v3' })));
    expect(buildCatalog({ models }).get('image/acme/portrait-v2')!.deprecation).toMatchObject({ sunsetDate: '2027-01-01', replacement: 'image/acme/portrait-v3' });
    const moved = buildCatalog({ models, deprecations: [{ model: 'image/acme/portrait-v2', sunset_date: '2026-06-01' }] });
    expect(moved.get('image/acme/portrait-v2')!.deprecation).toMatchObject({ sunsetDate: '2026-06-01', migrationUrl: 'deprecations#image/acme/portrait-v2' });
  });

  it('refuses a path declared twice, or two paths one OpenAPI operation name apart', () => {
    expect(() => build(base(), base())).toThrow('models[1] (image/acme/portrait-v2): image/acme/portrait-v2 is declared twice (also models[0] (image/acme/portrait-v2))');
    expect(() => build(base(), { ...base(), path: 'image/acme/portrait_v2' })).toThrow("models[1] (image/acme/portrait_v2): its path differs from image/acme/portrait-v2's only in '.', '_', '-' or case");
  });

  it('completes the schema: unknown properties refused, media-url fields as the catalog writes them, an example for every field', () => {
    const morph = build(MORPH_MODEL).find((m) => m.path === MORPH)!;
    const schema = morph.request as unknown as { additionalProperties: boolean; properties: Record<string, Record<string, unknown>> };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.image_url).toMatchObject({ type: 'string', format: 'uri', pattern: MEDIA_URL_PATTERN, description: 'The image the video starts from.' });
    expect(urlFieldsOf(schema)).toEqual(['image_url']);
    expect(schema.properties.seconds!.examples).toEqual([1]);
    expect(schema.properties.style!.examples).toEqual(['x']);
    expect(morph).toMatchObject({ kind: 'video', requestName: 'VideoAcmeMorphV1Request', summary: 'Generate a video with acme/morph-v1', engine: 'remote:gpu', timeoutMs: 600_000, custom: { where: 'models[0] (video/acme/morph-v1)' } });
    // The config's text is not changed underneath.
    expect((MORPH_MODEL.request as { additionalProperties?: unknown }).additionalProperties).toBeUndefined();
  });
});

describe('custom model property names', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('refuses the property name %s, naming it', (name) => {
    // As JSON text: a JavaScript object literal would not keep __proto__ as a key.
    const text = JSON.stringify({ models: [base()] }).replace('"properties":{', `"properties":{"${name}":{"type":"string","description":"p"},`);
    const path = join(mkdtempSync(join(tmpdir(), 'mediagen-cfg-')), 'config.json');
    writeFileSync(path, text);
    const load = () => modelsWith(loadConfig({ env: {}, configFile: path }).models);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`.properties.${name}: '${name}' is reserved; give the property another name`);
  });
});

describe('custom models in the catalog, prices and run policy', () => {
  const config = { ...loadConfig({ env: {} }), models: readCustomModels(CUSTOM_MODELS, 'c.json') };
  const catalog = buildCatalog({ models: modelsWith(config.models) });

  it('prices each rule with named rates the config file\'s prices can replace', () => {
    const table = priceTableFor(config, catalog);
    expect(table.rates(GRADIENT)).toEqual({ per_megapixel: 1000 });
    // 1024 x 768 = 0.786432 megapixels at $0.001: 786.432 micro-USD, rounded up.
    expect(table.priceOf(GRADIENT, { width: 1024, height: 768 })).toBe(787);
    expect(table.priceOf(GRADIENT, { width: 1000, height: 1000 })).toBe(1000);
    expect(table.priceOf(TONE, { duration: 2.5 })).toBe(5000);
    expect(table.priceOf(TONE, { duration: 0.1 })).toBe(200);
    expect(table.priceOf(MORPH, { seconds: 3 })).toBe(150_000);
    const cheaper = priceTableFor({ ...config, prices: { [TONE]: { per_second: 1000 } } }, catalog);
    expect(cheaper.priceOf(TONE, { duration: 3 })).toBe(3000);
    expect(() => priceTableFor({ ...config, prices: { [TONE]: { per_request: 1 } } }, catalog)).toThrow(`prices.${TONE}: unknown rate 'per_request'; its rates are per_second`);
  });

  it("checks the most a request can cost again with the config's prices: a rate that overflows it stops the start", () => {
    // seconds is at most 10: 10 times this rate is past Number.MAX_SAFE_INTEGER micro-USD.
    expect(() => priceTableFor({ ...config, prices: { [MORPH]: { per_second: 999_999_999_000_000 } } }, catalog)).toThrow(
      `prices.${MORPH}: with these rates the most a request can cost (at its fields' maxima) is past any amount this server can hold; lower the rate`,
    );
    expect(() => priceTableFor({ ...config, prices: { [MORPH]: { per_second: 999_999_999_000_000 } } }, catalog)).toThrow(ConfigError);
    expect(priceTableFor({ ...config, prices: { [MORPH]: { per_second: 1_000_000 } } }, catalog).priceOf(MORPH, { seconds: 10 })).toBe(10_000_000);
  });

  it('prices fixed and per-output rules', () => {
    const models = build(
      base(),
      withBase((d) => ((d.path = 'image/acme/multi-v1'), (request(d).properties.count = { type: 'integer', minimum: 1, maximum: 4, default: 1, description: 'Images to make.' }), (d.price = { per_output: '0.005', count_field: 'count' }))),
      withBase((d) => ((d.path = 'image/acme/single-v1'), (d.price = { per_output: '0.005' }))),
    );
    const table = priceTableFor(loadConfig({ env: {} }), buildCatalog({ models }));
    expect(table.priceOf('image/acme/portrait-v2', { prompt: 'x' })).toBe(10_000);
    expect(table.priceOf('image/acme/multi-v1', { count: 3 })).toBe(15_000);
    expect(table.priceOf('image/acme/single-v1', {})).toBe(5000);
    expect(models.find((m) => m.path === 'image/acme/multi-v1')!.price!.unit).toBe('per output: per_output times count');
  });

  it('rounds up to a whole micro-USD, exactly for integers', () => {
    expect(ceilProduct([1000, 1024, 768], 1_000_000)).toBe(787);
    expect(ceilProduct([2000, 0.1])).toBe(200);
    expect(ceilProduct([3, 0.1])).toBe(1);
    expect(ceilProduct([1, 2 ** 40, 2 ** 20], 1_000_000)).toBe(1_152_921_504_607);
  });

  it('gives a custom model its declared timeout unless job_timeouts_ms names it', () => {
    expect(runPolicyFor(config, catalog).timeoutMs(MORPH, {})).toBe(600_000);
    expect(runPolicyFor(config, catalog).timeoutMs(TONE, {})).toBe(config.jobTimeoutMs);
    expect(runPolicyFor({ ...config, modelTimeoutsMs: { [MORPH]: 5000 } }, catalog).timeoutMs(MORPH, {})).toBe(5000);
  });

  it('refuses a custom model bound to the built-in engine, by its declaration or by model_engines', () => {
    const local = build(withBase((d) => (d.engine = 'local')));
    expect(() => buildBindings(local)).toThrow("models[0] (image/acme/portrait-v2).engine: 'local' is the built-in engine, which renders only the built-in models");
    const models = build(base());
    expect(() => buildBindings(models, { 'image/*': 'local' })).toThrow(
      "model_engines 'image/*' binds the custom model models[0] (image/acme/portrait-v2) to 'local' is the built-in engine",
    );
    expect(() => buildBindings(models, { 'image/acme/portrait-v2': 'local' })).toThrow('model_engines.image/acme/portrait-v2:');
    // A more specific entry puts it back on a pool.
    expect(buildBindings(models, { 'image/*': 'local', 'image/acme/*': 'remote:gpu-b' }).of('image/acme/portrait-v2')).toEqual({ kind: 'remote', pool: 'gpu-b' });
    expect(() => buildBindings(build(withBase((d) => (d.engine = 'remote:'))))).toThrow("models[0] (image/acme/portrait-v2).engine: 'remote:' names no pool");
  });
});
