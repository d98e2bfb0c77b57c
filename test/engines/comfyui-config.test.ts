import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/readers.js';
import { readComfyWorkflow } from '../../src/engines/comfyui/comfyui-binding.js';
import { buildComfyuiEngines } from '../../src/engines/comfyui/comfyui-build.js';
import { readComfyuiSettings } from '../../src/config/comfyui-settings.js';
import { systemClock } from '../../src/lib/clock.js';

const examples = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/comfyui');

describe('ComfyUI configuration', () => {
  it('reads a comfyui section with defaults, and refuses bad names, URLs and keys naming the key', () => {
    expect(readComfyuiSettings({ gpu: { base_url: 'http://gpu-box:8188/' } }, 'f.json')).toEqual([{ name: 'gpu', baseUrl: 'http://gpu-box:8188', requestTimeoutMs: 60_000, pollIntervalMs: 1_000 }]);
    const refused = (raw: unknown) => {
      try {
        readComfyuiSettings(raw, 'f.json');
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused({ GPU: { base_url: 'http://a' } })).toMatch(/comfyui name 'GPU'/);
    expect(refused({ gpu: {} })).toMatch(/comfyui\.gpu\.base_url is required/);
    expect(refused({ gpu: { base_url: 'ftp://a' } })).toMatch(/http or https/);
    expect(refused({ gpu: { base_url: 'http://u:p@a' } })).toMatch(/credentials/);
    expect(refused({ gpu: { base_url: 'http://a', poll: 1 } })).toMatch(/unknown key 'poll'/);
    expect(refused({ gpu: { base_url: 'http://a', request_timeout_ms: 5 } })).toMatch(/request_timeout_ms/);
  });

  it('refuses a workflow that is not API format, inputs naming a missing node, and unknown output nodes', () => {
    const wf = { '1': { class_type: 'SaveImage', inputs: {} } };
    expect(() => readComfyWorkflow({ workflow: { nodes: [], links: [] } }, 'm.upstream', examples)).toThrow(/UI-format/);
    expect(() => readComfyWorkflow({ workflow: { '1': { inputs: {} } } }, 'm.upstream', examples)).toThrow(/node '1' must be/);
    expect(() => readComfyWorkflow({ workflow: wf, inputs: { prompt: { node: '2', input: 'text' } } }, 'm.upstream', examples)).toThrow(/m\.upstream\.inputs\.prompt: the workflow has no node '2'/);
    expect(() => readComfyWorkflow({ workflow: wf, inputs: { prompt: [{ node: '1' }] } }, 'm.upstream', examples)).toThrow(/inputs\.prompt\[0\] must be/);
    expect(() => readComfyWorkflow({ workflow: wf, outputNodes: ['9'] }, 'm.upstream', examples)).toThrow(/output_nodes: the workflow has no node '9'/);
    expect(() => readComfyWorkflow({ workflow: 'missing.json' }, 'm.upstream', examples)).toThrow(/cannot read missing\.json/);
    expect(readComfyWorkflow({ workflow: wf, inputs: { prompt: [{ node: '1', input: 'a' }, { node: '1', input: 'b' }] } }, 'm', examples).inputs.prompt).toHaveLength(2);
  });

  it("the example config's models bind workflows that parse, whose inputs name real nodes, and build one engine running both", async () => {
    const config = JSON.parse(await readFile(join(examples, 'mediagen.json'), 'utf8')) as {
      comfyui: unknown;
      models: Array<{ path: string; engine: string; request: object; upstream: { workflow: string; inputs: Record<string, { node: string; input: string }>; output_nodes?: string[] } }>;
    };
    const settings = readComfyuiSettings(config.comfyui, 'mediagen.json');
    const models = new Map(config.models.map((m) => [m.path, { engine: m.engine, binding: { workflow: m.upstream.workflow, inputs: m.upstream.inputs, outputNodes: m.upstream.output_nodes }, schema: m.request, outputTypes: ['image/png'] }]));
    const engines = buildComfyuiEngines(settings, models, { clock: systemClock, outputMaxBytes: 1 << 20, configDir: examples, file: 'mediagen.json' });
    expect(engines.map((e) => e.name)).toEqual(['comfyui:gpu']);
    for (const m of config.models) {
      expect(engines[0]!.canRun(m.path)).toBe(true);
      const wf = readComfyWorkflow({ workflow: m.upstream.workflow, inputs: m.upstream.inputs }, m.path, examples);
      for (const [field, [t]] of Object.entries(wf.inputs)) {
        expect(Object.keys((m.request as { properties: object }).properties)).toContain(field);
        expect(wf.prompt[t!.node]!.inputs).toHaveProperty(t!.input);
      }
    }
    const classes = (i: number) => Object.values(readComfyWorkflow({ workflow: config.models[i]!.upstream.workflow }, 'x', examples).prompt).map((n) => n.class_type).sort();
    expect(classes(0)).toEqual(['CLIPTextEncode', 'CLIPTextEncode', 'CheckpointLoaderSimple', 'EmptyLatentImage', 'KSampler', 'SaveImage', 'VAEDecode']);
    expect(classes(1)).toContain('LoadImage');
    expect(classes(1)).toContain('VAEEncode');
    expect(() => buildComfyuiEngines([], models, { clock: systemClock, outputMaxBytes: 1, configDir: examples, file: 'f' })).toThrow(/comfyui has no 'gpu'/);
  });
});
