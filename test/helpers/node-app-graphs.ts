/**
 * A node app whose versions run a two-step graph: an image from the prompt, then a video starting
 * from that image (docs/node-apps.md). Shared by the publish, get and execute tests.
 */

export const IMAGE_MODEL = 'image/vendor-a/model-a-2/medium';
export const VIDEO_MODEL = 'video/vendor-e/model-e-1';

export const GRAPH_INPUT = {
  type: 'object',
  properties: {
    prompt: { type: 'string', description: 'What the image shows' },
    motion: { type: 'string', default: 'a slow push-in' },
  },
  required: ['prompt'],
};

export const GRAPH_OUTPUT = {
  type: 'object',
  properties: { image: { type: 'string', format: 'uri' }, video: { type: 'string', format: 'uri' } },
  required: ['image', 'video'],
};

export const TWO_STEP_GRAPH = {
  steps: [
    { id: 'img', model: IMAGE_MODEL, input: { prompt: '{{inputs.prompt}}', aspect_ratio: '16:9', resolution: '1K' } },
    { id: 'vid', model: VIDEO_MODEL, input: { start_image: '{{steps.img.urls[0]}}', prompt: 'Camera: {{inputs.motion}}', duration: 5 } },
  ],
  outputs: { image: '{{steps.img.urls[0]}}', video: '{{steps.vid.urls[0]}}' },
};

type Step = (typeof TWO_STEP_GRAPH.steps)[number];

/** TWO_STEP_GRAPH with step `i`'s input changed (a key set to undefined is removed). */
export function withStepInput(i: number, input: Record<string, unknown>, base: { steps: readonly Step[]; outputs: object } = TWO_STEP_GRAPH) {
  const steps = base.steps.map((s, j) =>
    j === i ? { ...s, input: Object.fromEntries(Object.entries({ ...s.input, ...input }).filter(([, v]) => v !== undefined)) } : s,
  );
  return { ...base, steps };
}
