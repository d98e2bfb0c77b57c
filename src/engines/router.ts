import { ConfigError } from '../config/config.js';
import type { ModelModule } from '../models/model.js';
import { buildBindings } from './bindings.js';
import type { EngineBindings } from './bindings.js';
import { EngineError } from './engine.js';
import type { BindableEngine, Engine, EngineContext, EngineJob, OutputFile } from './engine.js';

/**
 * The one Engine the worker is given: it hands each job to the engine its model is bound to. The
 * binding is decided once, by `EngineBindings` (bindings.ts: the model module's `engine`, unless
 * the config file's `model_engines` binds the model elsewhere by path or pattern). Every binding is
 * checked when the router is built, so a server with a model no engine can run refuses to start,
 * naming the model, rather than accept jobs that can only fail.
 */
export class EngineRouter implements Engine {
  readonly name = 'router';
  readonly #byModel: ReadonlyMap<string, Engine>;

  private constructor(byModel: ReadonlyMap<string, Engine>) {
    this.#byModel = byModel;
  }

  /**
   * Binds every model that takes requests (retired ones only answer 410) to its engine, as
   * `bindings` says; models bound to a remote pool get none here. Throws a ConfigError naming the
   * model when its engine is missing or cannot run it.
   */
  static build(models: readonly Pick<ModelModule, 'path' | 'engine' | 'custom'>[], engines: readonly BindableEngine[], bindings: EngineBindings = buildBindings(models)): EngineRouter {
    const byId = new Map(engines.map((e) => [e.name, e]));
    const byModel = new Map<string, Engine>();
    for (const m of models) {
      const binding = m.engine === undefined ? undefined : bindings.of(m.path);
      // Remote workers take these jobs over the worker protocol; no in-process engine runs them.
      if (!binding || binding.kind === 'remote') continue;
      const id = binding.engine;
      const origin = bindings.origin(m.path);
      const from = origin ? ` (${origin})` : '';
      const engine = byId.get(id);
      if (!engine) {
        throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which this server does not have; engines: ${[...byId.keys()].join(', ') || 'none'}`);
      }
      if (!engine.canRun(m.path)) throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which cannot run it`);
      byModel.set(m.path, engine);
    }
    return new EngineRouter(byModel);
  }

  /** The engine a model's jobs go to, if it takes requests and runs in this process. */
  engineFor(model: string): Engine | undefined {
    return this.#byModel.get(model);
  }

  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    // A job stored by a server with other models (a removed one, an older release), or of a model
    // bound to remote workers, has no engine here.
    const engine = this.#byModel.get(job.model);
    if (!engine) return Promise.reject(new EngineError('engine_failed', `no engine on this server runs ${job.model}`));
    return engine.run(job, ctx);
  }
}
