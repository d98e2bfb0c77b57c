import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { checkedStep, stepModel, stepPreparer } from '../../src/services/node-apps/node-app-steps.js';
import type { StepPhase } from '../../src/services/node-apps/node-app-steps.js';

const catalog = buildCatalog({ deprecations: [{ model: 'video/vendor-e/model-e-1', sunset_date: '2026-06-01', replacement: 'video/vendor-d/model-d-fast' }] });
const AFTER_SUNSET = Date.parse('2026-07-01T00:00:00Z');
const PHASES: Record<'publish' | 'execute' | 'run', StepPhase> = {
  publish: { at: 'publish', nowMs: AFTER_SUNSET },
  execute: { at: 'execute', nowMs: AFTER_SUNSET, publicUrl: 'https://api.test' },
  run: { at: 'run' },
};
const refusal = (model: string, phase: StepPhase): DomainError => {
  try {
    stepModel(catalog, model, "step 'x'", phase);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('not refused');
};

describe('whether a model can be a graph step: one rule for publish, execute and run', () => {
  it.each(Object.entries(PHASES))('refuses an unknown model and a model with an endpoint of its own at %s, with the same message', (_, phase) => {
    expect(refusal('video/vendor-z/model-z-9', phase)).toMatchObject({ code: 'invalid_request', message: "step 'x': no model 'video/vendor-z/model-z-9' in the catalog (GET /models lists them)" });
    expect(refusal('loraTraining', phase)).toMatchObject({
      code: 'invalid_request',
      message: "step 'x': model 'loraTraining' cannot be a step (it is run through /styles/train); steps call generation models",
    });
  });

  it('refuses a retired model and one past its sunset: 400 at publish, 410 at execute as generation answers', () => {
    expect(refusal('image/vendor-g/model-g-3', PHASES.publish).message).toBe("step 'x': model 'image/vendor-g/model-g-3' is retired and takes no requests; use 'image/vendor-g/model-g-5-lite'");
    expect(refusal('video/vendor-e/model-e-1', PHASES.publish).message).toBe(
      "step 'x': model 'video/vendor-e/model-e-1' reached its sunset date 2026-06-01 and takes no requests; use 'video/vendor-d/model-d-fast'",
    );
    expect(refusal('image/vendor-g/model-g-3', PHASES.execute)).toMatchObject({ code: 'model_unavailable', details: { fields: { reason: 'deprecated' } } });
    expect(refusal('video/vendor-e/model-e-1', PHASES.execute)).toMatchObject({ code: 'model_unavailable', details: { fields: { sunset_date: '2026-06-01' } } });
  });

  it('lets an admitted job run a model that reached its sunset since, and refuses a retired one', () => {
    expect(stepModel(catalog, 'video/vendor-e/model-e-1', "step 'x'", PHASES.run).path).toBe('video/vendor-e/model-e-1');
    expect(refusal('image/vendor-g/model-g-3', PHASES.run).message).toMatch(/is retired and takes no requests/);
  });
});

describe('a model bound to remote workers', () => {
  const remote = new Map([['image/vendor-b/model-b-1', 'gpu']]);
  it.each(Object.entries(PHASES))('cannot be a step at %s: node apps run their steps on this server\'s engines', (_, phase) => {
    expect(() => stepModel(catalog, 'image/vendor-b/model-b-1', "step 'x'", phase, remote)).toThrow(
      new DomainError('invalid_request', "step 'x': model 'image/vendor-b/model-b-1' runs on remote workers (pool 'gpu'), and a node app's steps run on this server's own engines; it cannot be a step"),
    );
    expect(stepModel(catalog, 'image/vendor-a/model-a-2/medium', "step 'x'", phase, remote).path).toBe('image/vendor-a/model-a-2/medium');
  });

  it('fails a run whose step model was bound remotely after the job was admitted', () => {
    const prepare = stepPreparer(catalog, remote);
    expect(() => prepare({ id: 'b', model: 'image/vendor-b/model-b-1', input: { prompt: 'x' } }, { inputs: {}, steps: {} })).toThrow(/^step 'b': model 'image\/vendor-b\/model-b-1' runs on remote workers/);
  });
});

describe("a step's body", () => {
  const step = { id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: '{{inputs.p}}', aspect_ratio: '{{inputs.shape}}', resolution: '1K' } };

  it('is built and checked the same at execute and at run, naming the step in a refusal', () => {
    const scope = { inputs: { p: 'a fox', shape: '7:7' }, steps: {} };
    const mine = step;
    expect(() => checkedStep(catalog, mine, scope, PHASES.execute)).toThrow(/^step 'img': 'aspect_ratio' must be one of "1:1", /);
    expect(() => stepPreparer(catalog)(mine, scope)).toThrow(/^step 'img': 'aspect_ratio' must be one of "1:1", /);
    expect(stepPreparer(catalog)(mine, { ...scope, inputs: { p: 'a fox', shape: '1:1' } })).toMatchObject({ prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K' });
    expect(() => stepPreparer(catalog)({ ...mine, input: { prompt: 'x {{inputs.nope}}' } }, scope)).toThrow(new DomainError('invalid_request', "steps.img.input.prompt: input 'nope' was not given"));
  });

  it("never fills a model's defaults into the inputs it was built from", () => {
    const boards = [{ id: '00000000-0000-4000-8000-000000000000' }];
    const scope = { inputs: { p: 'a fox', shape: '1:1', boards }, steps: {} };
    const body = stepPreparer(catalog)({ ...step, input: { ...step.input, moodboards: '{{inputs.boards}}' } }, scope);
    expect(body.moodboards).toEqual([{ id: '00000000-0000-4000-8000-000000000000', strength: 0.23 }]);
    expect(boards).toEqual([{ id: '00000000-0000-4000-8000-000000000000' }]);
  });
});
