import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closest as serverClosest } from '../../src/lib/closest.js';
import { MCP_TOKEN_ENVS } from '../../src/config/mcp-client.js';
import { closest } from '../../packages/client/src/cli/suggest.js';
import { CLIENT_TOKEN_ENVS } from '../../packages/client/src/cli/settings.js';
import { buildBody } from '../../packages/client/src/cli/output.js';
import { describeModel, typeOf } from '../../packages/client/src/cli/models.js';
import type { Model } from '../../packages/client/src/index.js';

/**
 * What the client package restates because it cannot import the server (packages/client has no
 * server dependency): held equal to the server's here.
 */
describe('the client package agrees with the server', () => {
  it("suggests the model the server's 404 suggests, for any word and catalog", () => {
    const ids = fc.array(fc.stringMatching(/^[a-z0-9/-]{1,30}$/), { maxLength: 12 });
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9/-]{0,30}$/), ids, (word, candidates) => closest(word, candidates) === serverClosest(word, candidates)));
    expect(closest('image/vendor-a/model-a-2/mediun', ['image/vendor-a/model-a-2/medium', 'video/x/y'])).toBe('image/vendor-a/model-a-2/medium');
    expect(closest('video/nothing/like/it', ['image/vendor-a/model-a-2/medium'])).toBeUndefined();
  });

  it('reads the token from the variables `mediagen mcp` reads, in the same order', () => {
    expect([...CLIENT_TOKEN_ENVS]).toEqual([...MCP_TOKEN_ENVS]);
  });
});

describe('generate --set key=@FILE', () => {
  it('uploads each @FILE and sets its URL, keeps @@ as a text starting with @, and checks every --set before the first upload', async () => {
    const uploaded: string[] = [];
    const upload = async (file: string) => {
      uploaded.push(file);
      return `https://media.example/assets/${uploaded.length}.png`;
    };
    const body = await buildBody({ prompt: 'p', set: ['image_url=@a.png', 'ref.image_url=@./b c.png', 'note=@@me', 'seed=3'] }, async () => '', upload);
    expect(body).toEqual({ prompt: 'p', image_url: 'https://media.example/assets/1.png', ref: { image_url: 'https://media.example/assets/2.png' }, note: '@me', seed: 3 });
    expect(uploaded).toEqual(['a.png', './b c.png']);

    uploaded.length = 0;
    await expect(buildBody({ set: ['image_url=@a.png', '__proto__.x=1'] }, async () => '', upload)).rejects.toThrow('bad key');
    await expect(buildBody({ set: ['image_url=@'] }, async () => '', upload)).rejects.toThrow("give a file after '@'");
    expect(uploaded).toEqual([]);
  });
});

describe('models show', () => {
  const model = {
    id: 'image/x/y',
    kind: 'image',
    description: 'Makes an image',
    available: true,
    price: { description: 'per image', rates_micro_usd: { text_to_image: 30_000, edit: 1_500_000 } },
    request_schema: {
      type: 'object',
      required: ['prompt'],
      properties: {
        prompt: { type: 'string', maxLength: 4000, description: 'What to draw' },
        resolution: { type: 'string', enum: ['1K', '2K'], default: '1K' },
        seed: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] },
        styles: { type: 'array', items: { type: 'object' }, maxItems: 4 },
      },
    },
  } as unknown as Model;

  it('prints the price in USD and each field with type, bounds, allowed values and default, * for required', () => {
    expect(describeModel(model)).toBe(
      [
        'image/x/y  (image, available)',
        '  Makes an image',
        '  POST /generate/image/x/y',
        'Price: per image',
        '  text_to_image  0.030000 USD',
        '  edit           1.500000 USD',
        'Fields (* required):',
        '  prompt*     string ..4000              What to draw',
        '  resolution  one of 1K|2K default "1K"',
        '  seed        integer 0.. or null',
        '  styles      array of object ..4',
        '',
      ].join('\n'),
    );
    expect(typeOf({ type: 'string', format: 'uri' })).toBe('string (uri)');
  });

  it('shows the engines serving the model when the server tells them, whatever their shape', () => {
    expect(describeModel({ ...model, engines: ['local', 'gpu-1'] } as unknown as Model)).toContain('\nEngines: local, gpu-1\n');
    expect(describeModel({ ...model, engines: [{ name: 'comfyui-a', kind: 'comfyui' }, { id: 'w1', kind: 'remote' }] } as unknown as Model)).toContain('\nEngines: comfyui-a (kind comfyui), w1 (kind remote)\n');
    expect(describeModel({ ...model, engines: [{ name: 'comfyui:gpu', state: 'open' }] })).toContain('\nEngines: comfyui:gpu (state open)\n');
    expect(describeModel(model)).not.toContain('Engines');
  });
});
