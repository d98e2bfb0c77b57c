import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { MODELS } from '../../src/models/registry.js';
import { paramOf, toModelBody } from '../../src/services/openai/openai-fields.js';
import { placeImages } from '../../src/services/openai/openai-inputs.js';
import type { MappableModel } from '../../src/services/openai/openai-fields.js';

const model = (path: string): MappableModel => MODELS.find((m) => m.path === path)!;
const A2 = model('image/vendor-a/model-a-2/medium');
const B1 = model('image/vendor-b/model-b-1');
const D = model('video/vendor-d/model-d-fast');
const C = model('video/vendor-c/model-c-edit');

function paramRefused(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('invalid_request');
    return paramOf(err as DomainError);
  }
  throw new Error('not refused');
}

describe('the one rule from OpenAI fields to a model body', () => {
  it('puts a size into width and height where the model has them, exactly', () => {
    expect(toModelBody(B1, { prompt: 'p', size: '1536x1024' })).toEqual({ body: { prompt: 'p', width: 1536, height: 1024 }, jobs: 1 });
  });

  it('picks the nearest aspect ratio and resolution of the enums otherwise, and fills required ones for auto', () => {
    expect(toModelBody(A2, { prompt: 'p', size: '1536x1024' }).body).toMatchObject({ aspect_ratio: '3:2', resolution: '1K' });
    expect(toModelBody(A2, { prompt: 'p', size: '1024x1792' }).body).toMatchObject({ aspect_ratio: '9:16' });
    expect(toModelBody(A2, { prompt: 'p' }).body).toEqual({ prompt: 'p', aspect_ratio: '1:1', resolution: '1K' });
    expect(toModelBody(D, { prompt: 'p', size: '1920x1080' }).body).toMatchObject({ aspect_ratio: '16:9', resolution: '1080p' });
    expect(toModelBody(D, { prompt: 'p', size: '720x1280' }).body).toMatchObject({ aspect_ratio: '9:16', resolution: '720p' });
    expect(toModelBody(C, { prompt: 'p', size: '1280x720' }).body).toMatchObject({ ratio: '1280:720' });
  });

  it('puts seconds into the duration field when the model allows the value, else names seconds', () => {
    expect(toModelBody(D, { prompt: 'p', seconds: '8' }).body).toMatchObject({ duration: 8 });
    expect(paramRefused(() => toModelBody(D, { prompt: 'p', seconds: '12' }))).toBe('seconds');
    expect(paramRefused(() => toModelBody(A2, { prompt: 'p', seconds: 4 }))).toBe('seconds');
  });

  it('makes n jobs on a model without a count field', () => {
    expect(toModelBody(B1, { prompt: 'p', n: 3 }).jobs).toBe(3);
  });

  it('refuses, naming the param, what the model cannot honour', () => {
    expect(paramRefused(() => toModelBody(A2, { prompt: 'p', output_format: 'webp' }))).toBe('output_format');
    expect(toModelBody(B1, { prompt: 'p', output_format: 'jpeg' }).body).toMatchObject({ output_format: 'jpeg' });
    expect(paramRefused(() => toModelBody(B1, { prompt: 'p', output_format: 'webp' }))).toBe('output_format');
    expect(paramRefused(() => toModelBody(B1, { prompt: 'p', size: '9000x9000' }))).toBe('size');
    expect(paramRefused(() => toModelBody(B1, { prompt: 'p', size: 'big' }))).toBe('size');
    expect(paramRefused(() => toModelBody(A2, { prompt: 'p', quality: 'high' }))).toBe('quality');
    expect(toModelBody(A2, { prompt: 'p', quality: 'auto', background: 'auto' }).body).toEqual({ prompt: 'p', aspect_ratio: '1:1', resolution: '1K' });
    expect(paramRefused(() => toModelBody(B1, { prompt: 'p', style: 'vivid' }))).toBe('style');
  });

  it('puts uploaded images into the image input, and refuses a mask or extra images the model has no place for', () => {
    const body: Record<string, unknown> = {};
    placeImages(A2, body, ['https://h/assets/files/k/asset.png']);
    expect(body.image_url).toBe('https://h/assets/files/k/asset.png');
    expect(paramRefused(() => placeImages(A2, {}, ['u'], 'm'))).toBe('mask');
    expect(paramRefused(() => placeImages(A2, {}, ['u', 'v']))).toBe('image');
    const video: Record<string, unknown> = {};
    placeImages(model('video/vendor-f/model-f'), video, ['u'], undefined, 'input_reference');
    expect(video).toEqual({ start_image: 'u' });
    expect(paramRefused(() => placeImages(model('audio/vendor-l/model-l-1'), {}, ['u'], undefined, 'input_reference'))).toBe('input_reference');
  });
});
