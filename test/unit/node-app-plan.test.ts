import { describe, expect, it } from 'vitest';
import { runPolicyFor } from '../../src/app/settings.js';
import { loadConfig } from '../../src/config/config.js';
import { parseGraph } from '../../src/domain/node-app-graph.js';
import { STEPS_AT_ONCE, isNodeAppJobType, nodeAppJobType, planTimeoutMs, stepOutputStandIns, stepOutputUrl } from '../../src/domain/node-app-plan.js';
import type { EngineStage } from '../../src/engines/engine.js';
import { StageForwarder } from '../../src/engines/node-app-stages.js';
import { buildCatalog } from '../../src/models/catalog.js';

const GRAPH = {
  steps: [
    { id: 'a', model: 'image/vendor-b/model-b-1', input: { prompt: 'a' } },
    { id: 'b', model: 'video/vendor-f/model-f', input: { prompt: 'b' } },
    { id: 'c', model: 'video/vendor-e/model-e-1', input: { prompt: 'c', start_image: '{{steps.a.urls[0]}}', end_image: '{{steps.a.urls[2]}}' } },
  ],
  outputs: { clip: '{{steps.c.urls[0]}}' },
};

describe('a node-app job\'s timeout', () => {
  it('is, over the graph\'s levels, the sum of the longest step timeout in each', () => {
    const timeouts: Record<string, number> = { 'image/vendor-b/model-b-1': 10_000, 'video/vendor-f/model-f': 50_000, 'video/vendor-e/model-e-1': 30_000 };
    expect(planTimeoutMs(parseGraph(GRAPH), (m) => timeouts[m]!)).toBe(50_000 + 30_000);
  });

  it('gives a level of more steps than run at once the time they need queued for STEPS_AT_ONCE places', () => {
    const ids = ['a', 'b', 'c', 'd'];
    const graph = parseGraph({
      steps: ids.map((id) => ({ id, model: id === 'a' ? 'slow' : 'fast', input: {} })),
      outputs: Object.fromEntries(ids.map((id) => [id, `{{steps.${id}.urls[0]}}`])),
    });
    expect(STEPS_AT_ONCE).toBe(2);
    // (40 + 3 * 10) / 2 + 40 / 2: e.g. the three fast ones on one place (30) while the slow one runs (40).
    expect(planTimeoutMs(graph, (m) => (m === 'slow' ? 40_000 : 10_000))).toBe(55_000);
  });

  it("follows the config's model timeouts through the run policy, and the default for a plan it cannot read", () => {
    const config = { ...loadConfig({ env: {} }), jobTimeoutMs: 100_000, modelTimeoutsMs: { 'video/vendor-f/model-f': 400_000 } };
    const policy = runPolicyFor(config, buildCatalog({}));
    expect(policy.timeoutMs('node-app/clip', { inputs: {}, graph: GRAPH })).toBe(400_000 + 100_000);
    expect(policy.timeoutMs('node-app/clip', { graph: 'nope' })).toBe(100_000);
    expect(policy.timeoutMs('video/vendor-f/model-f')).toBe(400_000);
    expect(policy.timeoutMs('image/vendor-b/model-b-1', { prompt: 'x' })).toBe(100_000);
  });
});

describe("a node-app job's type", () => {
  it('is the prefix and a slug, as a client may name it in GET /jobs?types=', () => {
    expect(isNodeAppJobType(nodeAppJobType('lighthouse-clip'))).toBe(true);
    for (const t of ['node-app/', 'node-app/Clip', 'node-app/a--b', 'node-app/-a', 'node-app/a/b', 'image/vendor-b/model-b-1']) expect(isNodeAppJobType(t)).toBe(false);
  });
});

describe('stand-in URLs for step outputs', () => {
  it('give each step as many as the graph reads of it, under a name that never resolves', () => {
    const standIns = stepOutputStandIns(parseGraph(GRAPH), 'check');
    expect(standIns).toEqual({ a: [0, 1, 2].map((n) => stepOutputUrl('check', 'a', n)), b: [], c: [] });
    expect(new URL(standIns.a![0]!).hostname).toMatch(/\.invalid$/);
  });
});

describe('StageForwarder', () => {
  const recorder = (fail?: EngineStage) => {
    const seen: string[] = [];
    const fwd = new StageForwarder({
      stage: async (stage, preview) => {
        await new Promise((r) => setTimeout(r, 1));
        if (stage === fail) throw new Error('cancelled');
        seen.push(preview ? `${stage}:${preview.name}` : stage);
      },
    });
    return { seen, fwd };
  };

  it('reports each stage once, in order, one at a time, filling in a stage skipped', async () => {
    const { seen, fwd } = recorder();
    await Promise.all([fwd.reach('sampling'), fwd.reach('processing'), fwd.reach('sampling'), fwd.reach('intermediate-complete', { name: 'a.png', contentType: 'image/png' })]);
    await fwd.reach('sampling');
    expect(seen).toEqual(['processing', 'sampling', 'intermediate-complete:a.png']);
  });

  it('rejects the caller whose report is refused, and the reports after it', async () => {
    const { seen, fwd } = recorder('sampling');
    await fwd.reach('processing');
    await expect(fwd.reach('sampling')).rejects.toThrow('cancelled');
    await expect(fwd.reach('intermediate-complete')).rejects.toThrow('cancelled');
    expect(seen).toEqual(['processing']);
  });
});
