import { ConfigError } from '../config/config.js';
import type { ModelEngines } from '../config/options.js';
import type { ModelModule } from '../models/model.js';
import { REMOTE_PREFIX } from './bindings.js';
import { EngineError } from './engine.js';
import type { BindableEngine, Engine, EngineContext, EngineJob, OutputFile } from './engine.js';

/**
 * The one Engine the worker is given: it hands each job to the engine its model is bound to. The
 * binding is the model module's `engine`, unless the config file's `model_engines` binds the model
 * elsewhere. Every binding is checked when the router is built, so a server with a model no engine
 * can run refuses to start, naming the model, rather than accept jobs that can only fail.
 */
export class EngineRouter implements Engine {
  readonly name = 'router';
  readonly #byModel: ReadonlyMap<string, Engine>;

  private constructor(byModel: ReadonlyMap<string, Engine>) {
    this.#byModel = byModel;
  }

  /**
   * Binds every model that takes requests (retired ones only answer 410) to its engine. Throws a
   * ConfigError naming the model when its engine is missing or cannot run it, and for a
   * `model_engines` entry naming an unknown model or one that takes no requests.
   */
  static build(models: readonly ModelModule[], engines: readonly BindableEngine[], overrides: ModelEngines = {}): EngineRouter {
    const byId = new Map(engines.map((e) => [e.name, e]));
    for (const model of Object.keys(overrides)) {
      if (!models.some((m) => m.path === model && m.engine !== undefined)) {
        throw new ConfigError(`model_engines: unknown model '${model}'; models that take requests are ${runnable(models).join(', ')}`);
      }
    }
    const byModel = new Map<string, Engine>();
    for (const m of models) {
      if (m.engine === undefined) continue;
      const id = overrides[m.path] ?? m.engine;
      // Remote workers take these jobs over the worker protocol; no in-process engine runs them.
      if (id.startsWith(REMOTE_PREFIX)) continue;
      const from = overrides[m.path] !== undefined ? ' (model_engines)' : '';
      const engine = byId.get(id);
      if (!engine) {
        throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which this server does not have; engines: ${[...byId.keys()].join(', ') || 'none'}`);
      }
      if (!engine.canRun(m.path)) throw new ConfigError(`model ${m.path} is bound to engine '${id}'${from}, which cannot run it`);
      byModel.set(m.path, engine);
    }
    return new EngineRouter(byModel);
  }

  /** The engine a model's jobs go to, if it takes requests. */
  engineFor(model: string): Engine | undefined {
    return this.#byModel.get(model);
  }

  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    // A job stored by a server with other models (a removed one, an older release) has no engine here.
    const engine = this.#byModel.get(job.model);
    if (!engine) return Promise.reject(new EngineError('engine_failed', `no engine on this server runs ${job.model}`));
    return engine.run(job, ctx);
  }
}

const runnable = (models: readonly ModelModule[]) => models.filter((m) => m.engine !== undefined).map((m) => m.path);
