import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { buildBindings } from '../../src/engines/bindings.js';
import { EngineRouter } from '../../src/engines/router.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { ModelModule } from '../../src/models/model.js';
import { MODELS } from '../../src/models/registry.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { MINIMAL } from '../http/generate-support.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';

/** A ScriptedEngine under its own id that runs only the models it is given. */
class TestEngine implements BindableEngine {
  readonly scripted = new ScriptedEngine();
  readonly #models: ReadonlySet<string>;
  constructor(
    readonly name: string,
    models: readonly string[],
  ) {
    this.#models = new Set(models);
  }
  canRun(model: string): boolean {
    return this.#models.has(model);
  }
  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    return this.scripted.run(job, ctx);
  }
}

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
const TAKING = MODELS.filter((m) => m.engine !== undefined).map((m) => m.path);

const testModel = (engine: string): ModelModule => ({
  ...MODELS.find((m) => m.path === B1)!,
  path: 'image/vendor-t/model-t-1',
  engine,
});

describe('building the engine router', () => {
  it("binds every model of the registry to the local engine, which can run them all, and leaves retired models unbound", () => {
    const router = EngineRouter.build(MODELS, [new LocalEngine({ clock: new ManualClock('2026-11-22T12:00:00Z'), latencyMs: 0 })]);
    for (const path of TAKING) expect(router.engineFor(path)?.name, path).toBe('local');
    for (const m of MODELS.filter((m) => m.engine === undefined)) expect(router.engineFor(m.path), m.path).toBeUndefined();
  });

  it('refuses a model bound to an engine the server does not have, naming the model', () => {
    const build = () => EngineRouter.build([...MODELS, testModel('gpu-farm')], [new TestEngine('local', TAKING)]);
    expect(build).toThrow(ConfigError);
    expect(build).toThrow("model image/vendor-t/model-t-1 is bound to engine 'gpu-farm', which this server does not have; engines: local");
  });

  it('refuses a model bound to an engine that cannot run it, naming the model', () => {
    const build = () => EngineRouter.build([...MODELS, testModel('local')], [new TestEngine('local', TAKING)]);
    expect(build).toThrow("model image/vendor-t/model-t-1 is bound to engine 'local', which cannot run it");
  });

  it('refuses a model_engines binding to a missing engine, or to one that cannot run the model, saying it came from model_engines', () => {
    const engines = [new TestEngine('local', TAKING), new TestEngine('second', [A2])];
    expect(() => EngineRouter.build(MODELS, engines, buildBindings(MODELS, { [B1]: 'remote' }))).toThrow(
      `model ${B1} is bound to engine 'remote' (model_engines), which this server does not have; engines: local, second`,
    );
    expect(() => EngineRouter.build(MODELS, engines, buildBindings(MODELS, { [B1]: 'second' }))).toThrow(`model ${B1} is bound to engine 'second' (model_engines), which cannot run it`);
  });

  it('refuses a model_engines entry for an unknown or retired model (the bindings, which the router asks)', () => {
    expect(() => buildBindings(MODELS, { 'image/vendor-x/nothing': 'local' })).toThrow(/^model_engines: unknown model 'image\/vendor-x\/nothing'/);
    expect(() => buildBindings(MODELS, { 'image/vendor-g/model-g-3': 'local' })).toThrow(/^model_engines: unknown model 'image\/vendor-g\/model-g-3'/);
  });
  it("counts a job this process claimed against its engine's room from the claim until its release, once however often it is told", () => {
    const model = testModel('gpu');
    const router = EngineRouter.build([model], [new TestEngine('gpu', [model.path])], undefined, { limits: { gpu: { maxInFlight: 2 } } });
    const room = (inUse = new Map<string, number>()) => router.limitedGroups(inUse).map((g) => [g.models, g.room]);
    expect(room()).toEqual([[[model.path], 2]]);
    const release = router.claimed('job-1', model.path);
    router.claimed('job-1', model.path);
    expect(room()).toEqual([[[model.path], 1]]);
    expect(room(new Map([['gpu', 1]]))).toEqual([[[model.path], 0]]);
    release();
    release();
    expect(room()).toEqual([[[model.path], 2]]);
  });
});

describe('a worker with the router', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('hands each job to the engine its model is bound to', async () => {
    const local = new TestEngine('local', TAKING);
    const second = new TestEngine('second', [B1]);
    const router = EngineRouter.build(MODELS, [local, second], buildBindings(MODELS, { [B1]: 'second' }));
    t = await createTestApp({ worker: { engine: router } });
    const ids: Record<string, string> = {};
    for (const model of [A2, B1]) {
      const res = await generate(t, model, MINIMAL[model]);
      expect(res.statusCode, res.body).toBe(200);
      ids[model] = (res.json() as { job_id: string }).job_id;
    }
    for (const id of Object.values(ids)) {
      await waitFor(async () => ((await get(t!, `/jobs/${id}`)).json() as { status: string }).status === 'completed', `job ${id} to complete`);
    }
    expect(second.scripted.finished).toEqual([ids[B1]]);
    expect(local.scripted.finished).toEqual([ids[A2]]);
  });
});
