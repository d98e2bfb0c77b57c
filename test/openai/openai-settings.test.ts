import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/readers.js';
import { readOpenAiSettings } from '../../src/config/openai-settings.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { OpenAiModels } from '../../src/services/openai/openai-models.js';
import { ManualClock } from '../../src/lib/clock.js';

const catalog = buildCatalog({});
const clock = new ManualClock('2026-11-22T12:00:00Z');

describe("the config's openai section", () => {
  it('reads aliases, defaults and the wait, 300 s by default', () => {
    const s = readOpenAiSettings({ models: { 'gpt-image-1': 'image/vendor-a/model-a-2/medium' }, default_image_model: 'gpt-image-1' }, 'c.json');
    expect(s).toEqual({ models: { 'gpt-image-1': 'image/vendor-a/model-a-2/medium' }, defaultImageModel: 'gpt-image-1', defaultVideoModel: undefined, waitSeconds: 300 });
  });

  it('refuses an unknown key, a bad alias name and a wait out of range, naming them', () => {
    expect(() => readOpenAiSettings({ model: {} }, 'c.json')).toThrow(/c\.json: openai: unknown key 'model'/);
    expect(() => readOpenAiSettings({ models: { 'has space': 'x' } }, 'c.json')).toThrow(ConfigError);
    expect(() => readOpenAiSettings({ wait_seconds: 0 }, 'c.json')).toThrow(/wait_seconds must be a whole number of seconds from 1 to 3600/);
  });

  it('stops the server at start for an alias or default naming no model, or a default of the wrong kind', () => {
    const settings = (raw: unknown) => readOpenAiSettings(raw, 'c.json');
    expect(() => new OpenAiModels(catalog, clock, settings({ models: { x: 'image/nope' } }))).toThrow(/openai\.models\.x: 'image\/nope' is not a model/);
    expect(() => new OpenAiModels(catalog, clock, settings({ default_video_model: 'image/vendor-b/model-b-1' }))).toThrow(/makes image, not video/);
  });

  it('resolves aliases and paths; unknown and retired ids are model_not_found; no model is the first prompt-only one', () => {
    const models = new OpenAiModels(catalog, clock, readOpenAiSettings({ models: { 'gpt-image-1': 'image/vendor-b/model-b-1' } }, 'c.json'));
    expect(models.resolve('gpt-image-1', 'image').path).toBe('image/vendor-b/model-b-1');
    expect(models.resolve(undefined, 'image').path).toBe('image/vendor-a/model-a-2/medium');
    expect(models.resolve(undefined, 'video').path).toBe('video/vendor-d/model-d-fast');
    for (const id of ['nope', 'image/vendor-g/model-g-3']) {
      expect(() => models.resolve(id, 'image')).toThrow(expect.objectContaining({ code: 'not_found', details: { fields: { param: 'model', code: 'model_not_found' } } }));
    }
    expect(() => models.resolve('video/vendor-d/model-d-fast', 'image')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
