import { describe, expect, it } from 'vitest';
import { errorFieldPaths, errorFields, topField } from '../../console/src/pages/playground/field-errors.js';
import { progressOf } from '../../console/src/pages/playground/progress.js';
import { bodyOf, looksValid } from '../../console/src/pages/playground/body.js';
import { fieldsOf, humanize, initialValues } from '../../console/src/pages/playground/schema.js';
import type { Field, Values } from '../../console/src/pages/playground/schema.js';
import { MODELS } from '../../src/models/registry.js';

/**
 * The playground's pure parts, in Node: which field an API refusal names, how a request schema
 * becomes form fields, and how the form's values become a body (only what is set or required,
 * never an empty string).
 */

/** The fields of a built-in model's request schema, as GET /models serves it (a plain JSON copy). */
function builtIn(path: string): Field[] {
  const model = MODELS.find((m) => m.path === path);
  if (!model?.request) throw new Error(`no built-in model ${path} with a request schema`);
  return fieldsOf(JSON.parse(JSON.stringify(model.request)) as Record<string, unknown>);
}

describe('playground: the field an API refusal names', () => {
  // The API's own sentences (src/models/validation.ts, the models' checks, asset and URL checks).
  const cases: Array<[string, string[]]> = [
    ["'width' must be <= 8192", ['width']],
    ["'prompt' must be at least 1 character", ['prompt']],
    ["missing required property 'prompt'", ['prompt']],
    ["unknown property 'foo'", ['foo']],
    ['\'output_format\' must be one of "png", "jpeg" or null', ['output_format']],
    ['\'aspect_ratio\' must be one of "1:1", "4:3"', ['aspect_ratio']],
    ["'styles[0].strength' must be <= 2", ['styles[0].strength']],
    ["missing required property 'styles[1].id'", ['styles[1].id']],
    ["'image_url' must be an http(s) URL or a base64 data: URI or null", ['image_url']],
    ["'width' x 'height' must be at most 64,000,000 pixels (64 megapixels); 20000 x 20000 is 400,000,000", ['width', 'height']],
    ["'width' and 'height' must be at most 16383 with output_format 'webp' (the format's limit); use png or jpg for 20000 x 100", ['width', 'height']],
    ["'upscale_factor' and 'resolution' cannot be given together; give one of them", ['upscale_factor', 'resolution']],
    ["'learning_rate' is not taken when 'model' is qwen; only flux_dev, flux_schnell, wan and wan22 take it", ['learning_rate']],
    ['\'type\' must be one of "Style", "Object", "Character" when \'model\' is qwen', ['type']],
    ['image_url refused: localhost is a loopback name; start the server with --allow-private-urls to allow it', ['image_url']],
    ['image_style_references[0].url names an asset that was deleted; upload the file again', ['image_style_references[0].url']],
    ["'prompt' ends with [mediagen:fail=card_declined]: [mediagen:fail=<code>] takes one of input_fetch_failed", ['prompt']],
    // Fastify's schema messages, as the issue quotes them.
    ['body/width must be <= 2048', ['width']],
    ['body/styles/0/strength must be <= 2', ['styles[0].strength']],
    ["body must have required property 'prompt'", ['prompt']],
    // Sentences about the whole request.
    ['the request body must be a JSON object', []],
    ['insufficient balance: the job would cost $0.04 and $0.01 is available', []],
    ['workspace has too many jobs in progress', []],
    ['', []],
  ];
  it.each(cases)('%s', (message, paths) => {
    expect(errorFieldPaths(message)).toEqual(paths);
  });

  it('keeps the names the form has, top-level, without repeats', () => {
    expect(topField('styles[0].strength')).toBe('styles');
    expect(topField('image_url')).toBe('image_url');
    const known = ['prompt', 'width', 'height', 'styles'];
    expect(errorFields("'styles[0].strength' must be <= 2", known)).toEqual(['styles']);
    expect(errorFields("'width' x 'height' must be at most 64,000,000 pixels", known)).toEqual(['width', 'height']);
    expect(errorFields("unknown property 'foo'", known)).toEqual([]);
    expect(errorFields("step 'a': 'width' must be <= 8192", known)).toEqual(['width']);
  });
});

describe('playground: request schemas as form fields', () => {
  const byName = (fields: readonly Field[]) => Object.fromEntries(fields.map((f) => [f.name, f]));

  it("reads model-b-1's schema: a textarea prompt, sliders for bounded numbers, selects for enums, a nullable enum, a checkbox", () => {
    const f = byName(builtIn('image/vendor-b/model-b-1'));
    expect(f.prompt).toMatchObject({ kind: 'string', multiline: true, required: true, maxLength: 6000 });
    expect(f.width).toMatchObject({ kind: 'number', slider: true, min: 512, max: 8192, default: 1024, required: false });
    expect(f.mode).toMatchObject({ kind: 'enum', options: ['standard', 'max'], default: 'standard' });
    expect(f.output_format).toMatchObject({ kind: 'enum', options: ['png', 'jpeg'], nullable: true });
    expect(f.web_search).toMatchObject({ kind: 'boolean' });
    expect(f.style_images).toMatchObject({ kind: 'json', shape: 'array' });
  });

  it("reads model-a-2's: media URL fields with an upload, rows of objects, a nullable number, no slider over a seed's range", () => {
    const f = byName(builtIn('image/vendor-a/model-a-2/medium'));
    expect(f.image_url).toMatchObject({ kind: 'string', media: 'image', nullable: true, multiline: false });
    expect(f.seed).toMatchObject({ kind: 'number', slider: false, nullable: true });
    expect(f.styles).toMatchObject({ kind: 'rows' });
    const styles = f.styles as Extract<Field, { kind: 'rows' }>;
    expect(byName(styles.fields).strength).toMatchObject({ kind: 'number', slider: true, min: -2, max: 2, required: true });
    const refs = f.image_style_references as Extract<Field, { kind: 'rows' }>;
    expect(refs.maxItems).toBe(10);
    expect(byName(refs.fields).url).toMatchObject({ kind: 'string', media: 'image', required: true });
    expect(f.intensity).toMatchObject({ kind: 'number', integer: true, slider: true, step: 1 });
    expect(f.resolution).toMatchObject({ kind: 'enum', options: ['1K'] });
  });

  it('reads the other kinds: video and audio URLs, a list of training image URLs, a free-form object, numeric enums', () => {
    expect(byName(builtIn('video/vendor-c/model-c-edit')).init_video).toMatchObject({ kind: 'string', media: 'video' });
    expect(byName(builtIn('enhance/vendor-j/video-upscale')).video_url).toMatchObject({ kind: 'string', media: 'video' });
    expect(byName(builtIn('enhance/vendor-j/video-upscale')).upscale_factor).toMatchObject({ kind: 'enum', options: [1, 2, 4] });
    expect(byName(builtIn('video/vendor-e/model-e-1')).camera_control).toMatchObject({ kind: 'json', shape: 'object' });
    const urls = byName(builtIn('loraTraining')).urls as Extract<Field, { kind: 'list' }>;
    expect(urls).toMatchObject({ kind: 'list', required: true, minItems: 1, maxItems: 50 });
    expect(urls.item).toMatchObject({ kind: 'string', media: 'image' });
    expect(byName(builtIn('loraTraining')).learning_rate).toMatchObject({ kind: 'number', min: 0, max: 1 });
  });

  it('marks an array of enums as multi-checkboxes and a nested object as a group', () => {
    const f = byName(
      fieldsOf({
        type: 'object',
        properties: {
          tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } },
          size: { type: 'object', properties: { w: { type: 'integer' }, h: { type: 'integer' } }, required: ['w'] },
        },
      }),
    );
    expect(f.tags).toMatchObject({ kind: 'multi', options: ['a', 'b', 'c'] });
    expect(f.size).toMatchObject({ kind: 'group' });
    expect((f.size as Extract<Field, { kind: 'group' }>).fields.map((x) => [x.name, x.required])).toEqual([
      ['w', true],
      ['h', false],
    ]);
  });

  it('labels fields in words', () => {
    expect(humanize('image_url')).toBe('Image URL');
    expect(humanize('image_style_references')).toBe('Image style references');
    expect(humanize('target_fps')).toBe('Target FPS');
    expect(humanize('prompt')).toBe('Prompt');
  });
});

describe('playground: form values as a request body', () => {
  const fields = builtIn('image/vendor-b/model-b-1');
  const start = initialValues(fields);

  it('prefills defaults but sends only what is required or set, never an empty string', () => {
    expect(start).toMatchObject({ prompt: '', width: '1024', height: '1024', mode: 'standard', style: 'auto', output_format: undefined, web_search: false });
    // An untouched form: the required prompt is empty, so nothing at all (the API names it missing).
    expect(bodyOf(fields, start)).toEqual({ body: {}, errors: {} });
    expect(bodyOf(fields, { ...start, prompt: 'a fox' }).body).toEqual({ prompt: 'a fox' });
    const set: Values = { ...start, prompt: 'a fox', width: '2048', mode: 'max', web_search: true, output_format: 'jpeg' };
    expect(bodyOf(fields, set).body).toEqual({ prompt: 'a fox', width: 2048, mode: 'max', web_search: true, output_format: 'jpeg' });
    // Back to the default: not sent (the server applies it anyway).
    expect(bodyOf(fields, { ...set, width: '1024', mode: 'standard', web_search: false }).body).toEqual({ prompt: 'a fox', output_format: 'jpeg' });
    // A number field emptied is not sent.
    expect(bodyOf(fields, { ...set, width: '' }).body).not.toHaveProperty('width');
  });

  it('sends a number outside its bounds as it is, for the API to refuse', () => {
    expect(bodyOf(fields, { ...start, prompt: 'x', width: '99999' }).body).toEqual({ prompt: 'x', width: 99999 });
  });

  it('reports JSON that does not parse against its field and leaves it out', () => {
    const r = bodyOf(fields, { ...start, prompt: 'x', style_images: '[{"a": 1' });
    expect(r.body).toEqual({ prompt: 'x' });
    expect(Object.keys(r.errors)).toEqual(['style_images']);
    expect(bodyOf(fields, { ...start, prompt: 'x', style_images: '{"a": 1}' }).errors).toEqual({ style_images: expect.stringContaining('JSON array') });
    expect(bodyOf(fields, { ...start, prompt: 'x', style_images: '[{"a": 1}]' }).body).toEqual({ prompt: 'x', style_images: [{ a: 1 }] });
  });

  it('builds rows of objects with their required parts, and lists without empty rows', () => {
    const a2 = builtIn('image/vendor-a/model-a-2/medium');
    const v = initialValues(a2);
    expect(v).toMatchObject({ resolution: '1K', aspect_ratio: undefined, creativity: 'low', intensity: '0' });
    const body = bodyOf(a2, {
      ...v,
      prompt: 'a fox',
      aspect_ratio: '16:9',
      image_style_references: [{ url: 'https://example.com/a.png', strength: '0.5' }, { url: 'https://example.com/b.png', strength: '0.8' }],
    }).body;
    expect(body).toEqual({
      prompt: 'a fox',
      aspect_ratio: '16:9',
      resolution: '1K',
      image_style_references: [{ url: 'https://example.com/a.png' }, { url: 'https://example.com/b.png', strength: 0.8 }],
    });
    const lora = builtIn('loraTraining');
    // A required list starts with one empty row, which is not sent.
    expect(initialValues(lora).urls).toEqual(['']);
    expect(bodyOf(lora, { ...initialValues(lora), name: 'Ink' }).body).toEqual({ name: 'Ink' });
    expect(bodyOf(lora, { ...initialValues(lora), name: 'Ink', urls: ['https://example.com/1.png', '', '  '] }).body).toEqual({
      name: 'Ink',
      urls: ['https://example.com/1.png'],
    });
  });
});

describe('playground: whether a body is worth a price quote', () => {
  it('needs the required fields, within their bounds, rows included', () => {
    const b1 = builtIn('image/vendor-b/model-b-1');
    expect(looksValid(b1, {})).toBe(false);
    expect(looksValid(b1, { prompt: 'x' })).toBe(true);
    expect(looksValid(b1, { prompt: '' })).toBe(false);
    expect(looksValid(b1, { prompt: 'x', width: 99999 })).toBe(false);
    expect(looksValid(b1, { prompt: 'x', width: 8192 })).toBe(true);
    const a2 = builtIn('image/vendor-a/model-a-2/medium');
    const ok = { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' };
    expect(looksValid(a2, ok)).toBe(true);
    expect(looksValid(a2, { ...ok, intensity: 1.5 })).toBe(false);
    expect(looksValid(a2, { ...ok, styles: [{ strength: 1 }] })).toBe(false);
    expect(looksValid(a2, { ...ok, styles: [{ id: 's', strength: 1 }] })).toBe(true);
    expect(looksValid(a2, { ...ok, moodboards: [{ id: 'a' }, { id: 'b' }] })).toBe(false);
    const lora = builtIn('loraTraining');
    expect(looksValid(lora, { name: 'Ink', urls: ['https://example.com/a.png'], learning_rate: 0 })).toBe(false);
    expect(looksValid(lora, { name: 'Ink', urls: ['https://example.com/a.png'], learning_rate: 0.5 })).toBe(true);
  });
});

describe('playground: progress by status', () => {
  it('is a step of the way, whole at completed, none for a job that ended otherwise', () => {
    const values = ['backlogged', 'queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed'].map((s) => progressOf(s).value!);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(values.at(-1)).toBe(1);
    expect(progressOf('sampling')).toMatchObject({ step: 'Step 4 of 6', words: 'Generating' });
    expect(progressOf('failed').value).toBeUndefined();
    expect(progressOf('cancelled').value).toBeUndefined();
  });
});
