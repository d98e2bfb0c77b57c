import { systemClock } from '../../src/lib/clock.js';
import type { UpstreamState } from '../../src/engines/engine.js';
import { ComfyuiEngine } from '../../src/engines/comfyui/comfyui-engine.js';
import type { ComfyWorkflow } from '../../src/engines/comfyui/comfyui-binding.js';
import { MEDIA_URL_PATTERN } from '../../src/models/schema-kit.js';
import { fakeContext } from './engine-harness.js';
import type { FakeContext } from './engine-harness.js';

/** An engine context whose upstream store keeps what the run saved (shared across runs of one job), and its progress. */
export interface ComfyContext extends FakeContext {
  readonly saved: UpstreamState[];
  readonly fractions: number[];
}

export function comfyContext(outDir: string, inputs: Readonly<Record<string, Buffer>> = {}, store: UpstreamState[] = [], onStage?: () => void): ComfyContext {
  const base = fakeContext(outDir, inputs, onStage);
  const fractions: number[] = [];
  return Object.assign(base, {
    saved: store,
    fractions,
    progress: (f: number) => void fractions.push(f),
    upstream: {
      load: async () => store.at(-1),
      save: async (s: UpstreamState) => void store.push(structuredClone(s)),
    },
  });
}

export const imageSchema = {
  type: 'object',
  properties: {
    prompt: { type: 'string' },
    steps: { type: 'integer' },
    image_url: { type: 'string', pattern: MEDIA_URL_PATTERN },
  },
};

export function comfyEngine(baseUrl: string, workflow: ComfyWorkflow, opts: { outputTypes?: string[]; pollIntervalMs?: number } = {}): ComfyuiEngine {
  return new ComfyuiEngine({
    settings: { name: 'gpu', baseUrl, requestTimeoutMs: 5_000, pollIntervalMs: opts.pollIntervalMs ?? 20 },
    models: new Map([['image/comfy/sdxl', { workflow, schema: imageSchema, outputTypes: opts.outputTypes ?? ['image/png'] }]]),
    clock: systemClock,
    outputMaxBytes: 10 * 1024 * 1024,
  });
}
