import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { GRAPH_INPUT, GRAPH_OUTPUT, IMAGE_MODEL, TWO_STEP_GRAPH, VIDEO_MODEL, withStepInput } from '../helpers/node-app-graphs.js';

/**
 * Publishing a version with a graph (docs/node-apps.md): the graph is stored when every step's
 * model takes requests and accepts the step's body, every reference names something that exists,
 * and the outputs match the output schema; otherwise the version is refused, naming the problem.
 */

const OWNER = 'owner@localhost';
type Schema = Record<string, unknown>;

const [img, vid] = TWO_STEP_GRAPH.steps;
const outputSchema = (extra: Schema) => ({ ...GRAPH_OUTPUT, properties: { ...GRAPH_OUTPUT.properties, ...extra } });

/** [what, graph, message, input schema, output schema]: each refused with exactly that message. */
const REFUSALS: [string, unknown, string, Schema?, Schema?][] = [
  ['a graph that is not an object', [], 'graph must be a JSON object with steps and outputs'],
  ['a graph of JSON null', null, 'graph must be a JSON object with steps and outputs'],
  ['a step without an id', { ...TWO_STEP_GRAPH, steps: [{ model: IMAGE_MODEL, input: {} }] }, 'graph.steps[0].id must match [a-z][a-z0-9_-]* (at most 64 characters)'],
  [
    'an unknown model',
    { ...TWO_STEP_GRAPH, steps: [img, { ...vid, model: 'video/vendor-z/model-z-9' }] },
    "graph.steps[1].model: no model 'video/vendor-z/model-z-9' in the catalog (GET /models lists them)",
  ],
  [
    'a retired model',
    { ...TWO_STEP_GRAPH, steps: [{ ...img, model: 'image/vendor-g/model-g-3' }, vid] },
    "graph.steps[0].model: model 'image/vendor-g/model-g-3' is retired and takes no requests; use 'image/vendor-g/model-g-5-lite'",
  ],
  [
    'a model with an endpoint of its own (style training makes a style, not files a step can pass on)',
    { ...TWO_STEP_GRAPH, steps: [img, { ...vid, model: 'loraTraining', input: { name: 'x', urls: ['{{steps.img.urls[0]}}'] } }] },
    "graph.steps[1].model: model 'loraTraining' cannot be a step (it is run through /styles/train); steps call generation models",
  ],
  [
    'a reference to an input the input schema does not have',
    withStepInput(0, { prompt: 'A still of {{inputs.subject}}' }),
    "graph.steps[0].input.prompt: input 'subject' is not in the input schema's properties",
  ],
  [
    'a reference to an inherited property name',
    withStepInput(0, { prompt: '{{inputs.constructor}}' }),
    "graph.steps[0].input.prompt: input 'constructor' is not in the input schema's properties",
  ],
  ['a reference to a missing step', withStepInput(1, { start_image: '{{steps.image.urls[0]}}' }), "graph.steps[1].input.start_image: no step 'image' in the graph"],
  [
    'a cycle',
    withStepInput(0, { image_url: '{{steps.vid.urls[0]}}' }),
    "graph.steps: steps 'img' -> 'vid' -> 'img' form a cycle of references",
  ],
  [
    'an output the output schema does not have',
    { ...TWO_STEP_GRAPH, outputs: { ...TWO_STEP_GRAPH.outputs, thumb: '{{steps.img.urls[1]}}' } },
    "graph.outputs.thumb: output 'thumb' is not in the output schema's properties",
  ],
  [
    'a required output no graph output gives',
    { ...TWO_STEP_GRAPH, steps: [img], outputs: { image: '{{steps.img.urls[0]}}' } },
    "graph.outputs: the output schema requires 'video', which no graph output gives",
  ],
  [
    'two outputs of the same step result',
    { ...TWO_STEP_GRAPH, outputs: { ...TWO_STEP_GRAPH.outputs, still: '{{ steps.img.urls[0] }}' } },
    'graph.outputs.still: names the same result as graph.outputs.image (steps.img.urls[0]); give each step result one output name',
    undefined,
    outputSchema({ still: { type: 'string' } }),
  ],
  [
    'a step whose results nothing uses',
    { ...TWO_STEP_GRAPH, steps: [img, { ...img, id: 'spare' }, vid] },
    'graph.steps[1] (spare): no output uses its results, directly or through another step',
  ],
  ['a body without a field the model requires', withStepInput(0, { resolution: undefined }), "graph.steps[0] (img): missing required property 'resolution'"],
  ['a body with a field the model does not have', withStepInput(1, { sharpness: 3 }), "graph.steps[1] (vid): unknown property 'sharpness'"],
  ['a body with a fixed value the model refuses', withStepInput(1, { duration: 7 }), "graph.steps[1] (vid): 'duration' must be one of 5, 10"],
  [
    'an input whose type the field never takes',
    withStepInput(1, { start_image: '{{inputs.motion}}', prompt: '{{inputs.prompt}}' }),
    "graph.steps[1] (vid): 'start_image' must be string",
    { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, motion: { type: 'integer', minimum: 3 } } },
  ],
  [
    'an input whose listed values the field refuses',
    withStepInput(0, { aspect_ratio: '{{inputs.shape}}' }),
    `graph.steps[0] (img): 'aspect_ratio' must be one of "1:1", "4:3", "3:2", "16:9", "2.35:1", "4:5", "2:3", "9:16"`,
    { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, shape: { type: 'string', enum: ['5:4', '1:1'] } } },
  ],
  ['a graph larger than 1 MiB', withStepInput(0, { prompt: 'x'.repeat(1024 * 1024) }), 'graph must be at most 1 MiB of JSON'],
];

describe.each(backends)('publishing a node-app graph on $name', (backend) => {
  let t: TestApp;
  let appId: string;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    appId = (await t.services.nodeApps.create({ workspace: t.workspaceId, name: 'Clip maker', asEmail: OWNER })).id;
  });
  afterAll(() => t.close());

  const publish = (graph: unknown, input: Schema = GRAPH_INPUT, output: Schema = GRAPH_OUTPUT) =>
    t.services.nodeApps.publish({ nodeAppId: appId, inputSchema: input, outputSchema: output, exampleOutputs: [], graph, asEmail: OWNER });

  it.each(REFUSALS)('refuses %s, naming the problem, and stores nothing', async (_, graph, message, input, output) => {
    const err = await publish(graph, input, output).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('invalid_request');
    expect((err as DomainError).message).toBe(message);
    expect(await t.store.nodeApps.lastVersionId(appId)).toBeUndefined();
  });

  it('stores the two-step graph with the version, as given', async () => {
    const { version } = await publish(TWO_STEP_GRAPH);
    expect(version.graph).toEqual(TWO_STEP_GRAPH);
    expect((await t.store.nodeApps.getVersion(t.workspaceId, version.id))!.version.graph).toEqual(TWO_STEP_GRAPH);
  });

  it('accepts an unconstrained input in a field with listed values: some value of the input fits', async () => {
    const input = { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, shape: { type: 'string' }, seconds: { type: 'number' } } };
    const graph = withStepInput(1, { aspect_ratio: '{{inputs.shape}}', duration: '{{inputs.seconds}}' });
    expect((await publish(graph, input)).version.graph).toEqual(graph);
  });

  it('accepts an optional output schema property no graph output gives, and inputs no step reads', async () => {
    const input = { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, unused: { type: 'boolean' } } };
    expect((await publish(TWO_STEP_GRAPH, input, outputSchema({ notes: { type: 'string' } }))).version.graph).toEqual(TWO_STEP_GRAPH);
  });

  it('does not fill the model defaults into the stored graph or the input schema', async () => {
    const input = { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, refs: { type: 'array', default: [{ url: 'https://cdn.test/ref.png' }] } } };
    const graph = withStepInput(0, { image_style_references: '{{inputs.refs}}' });
    const { version } = await publish(graph, input);
    expect(version.graph).toEqual(graph);
    expect(version.inputSchema.properties).toEqual(input.properties);
  });

  it('refuses an input schema execute could not compile, with or without a graph, and stores nothing', async () => {
    const input = { ...GRAPH_INPUT, properties: { ...GRAPH_INPUT.properties, code: { type: 'string', pattern: '(' } } };
    const before = await t.store.nodeApps.lastVersionId(appId);
    for (const graph of [TWO_STEP_GRAPH, undefined]) {
      const err = await publish(graph, input).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^input schema is not a JSON Schema this server can check inputs with: /) });
    }
    expect(await t.store.nodeApps.lastVersionId(appId)).toBe(before);
  });

  it('still publishes a version without a graph', async () => {
    const { version } = await t.services.nodeApps.publish({ nodeAppId: appId, inputSchema: GRAPH_INPUT, outputSchema: GRAPH_OUTPUT, exampleOutputs: [], asEmail: OWNER });
    expect(version.graph).toBeNull();
  });
});

describe('a graph step whose model reached its sunset date', () => {
  it('is refused, naming the date and the replacement', async () => {
    const t = await createTestApp({ deprecations: [{ model: VIDEO_MODEL, sunset_date: '2026-06-01', replacement: 'video/vendor-d/model-d-fast' }] });
    try {
      const { id } = await t.services.nodeApps.create({ workspace: t.workspaceId, name: 'Old', asEmail: OWNER });
      const err = await t.services.nodeApps
        .publish({ nodeAppId: id, inputSchema: GRAPH_INPUT, outputSchema: GRAPH_OUTPUT, exampleOutputs: [], graph: TWO_STEP_GRAPH, asEmail: OWNER })
        .catch((e: unknown) => e);
      expect((err as DomainError).message).toBe(
        `graph.steps[1].model: model '${VIDEO_MODEL}' reached its sunset date 2026-06-01 and takes no requests; use 'video/vendor-d/model-d-fast'`,
      );
    } finally {
      await t.close();
    }
  });
});
