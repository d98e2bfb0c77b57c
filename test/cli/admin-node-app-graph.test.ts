import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, api, cleanup, oneLineError, run, startServer, tempDir } from '../e2e/binary.js';
import { GRAPH_INPUT, GRAPH_OUTPUT, TWO_STEP_GRAPH, withStepInput } from '../helpers/node-app-graphs.js';

const OWNER = 'owner@acme.test';

/** `mediagen admin ...args --data-dir dir` (no --json unless given). */
const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);

/** Workspace `acme` with one node app, the two schema files, and a way to write more files. */
async function setup() {
  const dir = tempDir();
  await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
  const { node_app_id: app } = await adminJson<{ node_app_id: string }>(dir, ['node-app', 'create', '--workspace', 'acme', '--name', 'Clip maker', '--as', OWNER]);
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const publishArgs = (graph: string) => [
    'node-app', 'publish', '--node-app', app, '--input-schema', file('input.json', GRAPH_INPUT), '--output-schema', file('output.json', GRAPH_OUTPUT), '--graph', graph, '--as', OWNER,
  ];
  return { dir, app, file, publishArgs };
}

const [img, vid] = TWO_STEP_GRAPH.steps;

describe('mediagen admin node-app publish --graph (compiled binary)', { timeout: 120_000 }, () => {
  afterEach(cleanup);

  it('publishes a two-step graph, and a running server shows its key mappings at GET /node-apps/{id}', async () => {
    const { dir, app, file, publishArgs } = await setup();
    const server = await startServer(['--port', '0', '--data-dir', dir]);
    const { token } = await adminJson<{ token: string }>(dir, ['token', 'create', '--workspace', 'acme', '--name', 'ci', '--as', OWNER]);
    const published = await adminJson<{ node_app_version_id: string; version: number }>(dir, publishArgs(file('graph.json', TWO_STEP_GRAPH)));
    expect(published.version).toBe(1);
    const res = await api(server.url, `/node-apps/${published.node_app_version_id}`, token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: app,
      version: 1,
      last_version_id: published.node_app_version_id,
      input_openapi_schema: GRAPH_INPUT,
      output_openapi_schema: GRAPH_OUTPUT,
      input_key_mapping: { prompt: 'inputs.prompt', motion: 'inputs.motion' },
      output_key_mapping: { 'steps.img.urls[0]': 'image', 'steps.vid.urls[0]': 'video' },
    });
  });

  it('refuses graph files that are missing, not JSON or too large, naming the file', async () => {
    const { dir, file, publishArgs } = await setup();
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.json'), /^mediagen: --graph \S*missing\.json cannot be read: no such file$/],
      [file('broken.json', '{"steps": ['), /^mediagen: --graph \S*broken\.json is not JSON: /],
      [file('big.json', withStepInput(0, { prompt: 'x'.repeat(1024 * 1024) })), /^mediagen: --graph \S*big\.json is larger than 1 MiB$/],
    ];
    for (const [graph, message] of cases) expect(oneLineError(await admin(dir, ...publishArgs(graph))), graph).toMatch(message);
  });

  it('refuses each kind of bad graph, naming the problem, and publishes nothing', async () => {
    const { dir, file, publishArgs } = await setup();
    const cases: [unknown, string][] = [
      [{ steps: [] }, 'graph.steps must be an array of 1 to 20 steps'],
      [{ ...TWO_STEP_GRAPH, steps: [img, { ...vid, model: 'video/vendor-z/nope' }] }, "graph.steps[1].model: no model 'video/vendor-z/nope' in the catalog (GET /models lists them)"],
      [withStepInput(0, { prompt: '{{inputs.subject}}' }), "graph.steps[0].input.prompt: input 'subject' is not in the input schema's properties"],
      [withStepInput(1, { start_image: '{{steps.image.urls[0]}}' }), "graph.steps[1].input.start_image: no step 'image' in the graph"],
      [withStepInput(0, { image_url: '{{steps.vid.urls[0]}}' }), "graph.steps: steps 'img' -> 'vid' -> 'img' form a cycle of references"],
      [{ ...TWO_STEP_GRAPH, outputs: { ...TWO_STEP_GRAPH.outputs, thumb: '{{steps.img.urls[1]}}' } }, "graph.outputs.thumb: output 'thumb' is not in the output schema's properties"],
      [{ steps: [img], outputs: { image: '{{steps.img.urls[0]}}' } }, "graph.outputs: the output schema requires 'video', which no graph output gives"],
      [withStepInput(1, { duration: 7 }), "graph.steps[1] (vid): 'duration' must be one of 5, 10"],
    ];
    for (const [graph, message] of cases) {
      const r = await admin(dir, ...publishArgs(file('graph.json', graph)));
      expect(oneLineError(r), message).toBe(`mediagen: ${message}`);
      expect(r.stdout).toBe('');
    }
    expect((await adminJson(dir, publishArgs(file('graph.json', TWO_STEP_GRAPH)))).version).toBe(1);
  });
});
