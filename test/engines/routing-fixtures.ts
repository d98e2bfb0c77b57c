/** What the routing tests share: a custom image model whose engines are fal accounts (fakes), and the key the fakes take. */

export const FAL_TEST_KEY = 'fal-key-id:0123456789abcdef0123';

/** A custom image model at `path`, bound to `engine`, its one `upstream` block for fal's flux. */
export const falModel = (path: string, engine: string) => ({
  path,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 1000, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.03' },
  engine,
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}', num_images: 1 } },
});
