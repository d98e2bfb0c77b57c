import { describe, expect, expectTypeOf, it } from 'vitest';
import { Mediagen, outputUrls } from '../../packages/client/src/index.js';
import type { GenerateBody, Job, ModelPath, QuoteBody, components } from '../../packages/client/src/index.js';

/**
 * The client's types come from the generated OpenAPI types: checked by `npm run typecheck` (the
 * `@ts-expect-error` lines fail it if the refusal they expect goes away), run here as well.
 */
describe('the typed client types', () => {
  it('types each known model body from its schema, and takes any object for a model it does not know', () => {
    const client = new Mediagen({ baseUrl: 'http://localhost:8080' });
    const neverRun = () => {
      // @ts-expect-error aspect_ratio and resolution are required
      void client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x' });
      // @ts-expect-error an aspect ratio the model does not take
      void client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '5:1', resolution: '1K' });
      // @ts-expect-error unknown properties are refused by the server and by the types
      void client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', colour: 'red' });
      void client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', seed: 7 });
      void client.generate('custom/my-model', { anything: [1, 2] });
    };
    expect(typeof neverRun).toBe('function');
    expectTypeOf<'image/vendor-a/model-a-2/medium'>().toExtend<ModelPath>();
    expectTypeOf<GenerateBody<'image/vendor-a/model-a-2/medium'>>().toEqualTypeOf<components['schemas']['ModelA2Request']>();
    expectTypeOf<Job['status']>().toEqualTypeOf<components['schemas']['Job']['status']>();
  });

  it("types a quote's body as the model's creation body, style training's included", () => {
    const client = new Mediagen({ baseUrl: 'http://localhost:8080' });
    const neverRun = () => {
      void client.models.quote('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' });
      // @ts-expect-error an aspect ratio the model does not take
      void client.models.quote('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '5:1', resolution: '1K' });
      void client.models.quote('loraTraining', { name: 'Red', urls: ['https://assets.example/a.png'] });
      // @ts-expect-error a training body needs its images
      void client.models.quote('loraTraining', { name: 'Red' });
      void client.models.quote('custom/my-model', { anything: [1, 2] });
    };
    expect(typeof neverRun).toBe('function');
    expectTypeOf<QuoteBody<'loraTraining'>>().toEqualTypeOf<components['schemas']['StyleTrainingRequest']>();
    expectTypeOf<Awaited<ReturnType<Mediagen['jobs']['details']>>['billing']>().toEqualTypeOf<'held' | 'charged' | 'released' | 'none'>();
    expectTypeOf<Awaited<ReturnType<Mediagen['workspace']['get']>>['role']>().toEqualTypeOf<'owner' | 'admin' | 'member' | null>();
  });

  it('outputUrls reads each shape of result.urls', () => {
    expect(outputUrls({ result: { urls: ['http://x/a.png', 'http://x/b.png'] } })).toEqual(['http://x/a.png', 'http://x/b.png']);
    expect(outputUrls({ result: { urls: [{ type: 'model', url: 'http://x/m.glb' }, { type: 'preview', url: 'http://x/p.png' }] } })).toEqual(['http://x/m.glb', 'http://x/p.png']);
    expect(outputUrls({ result: { urls: { video: 'http://x/v.mp4' } } })).toEqual(['http://x/v.mp4']);
    expect(outputUrls({})).toEqual([]);
  });
});
