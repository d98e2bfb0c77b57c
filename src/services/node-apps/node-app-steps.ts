import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { GraphError, substitute } from '../../domain/node-app-graph.js';
import type { GraphScope, GraphStep } from '../../domain/node-app-graph.js';
import { isAvailable } from '../../models/catalog.js';
import type { Catalog, CatalogEntry } from '../../models/catalog.js';
import { sunsetError } from '../../models/deprecation.js';
import type { BodyValidator } from '../../models/validation.js';

/**
 * A graph step's model and body, one rule for the three times a graph is looked at
 * (docs/node-apps.md): publishing it, executing it (admission) and running it (the worker).
 */

/** When a step is looked at, which decides what a model that takes no requests answers. */
export type StepPhase =
  /** A sunset or retired model is a fault of the graph: 400 naming it. */
  | { readonly at: 'publish'; readonly nowMs: number }
  /** As for a generation request: 410 with the migration link. */
  | { readonly at: 'execute'; readonly nowMs: number; readonly publicUrl: string }
  /**
   * Not judged again: the job was admitted, and runs as a generation job admitted before its
   * model's sunset does. A retired model has no validator and is refused below.
   */
  | { readonly at: 'run' };

/** A catalog entry that takes requests. */
export type StepEntry = CatalogEntry & { readonly validate: BodyValidator };

/** Models bound to a remote pool (EngineBindings.remote): path -> pool. */
export type RemoteModels = ReadonlyMap<string, string>;

const NO_REMOTE: RemoteModels = new Map();

/**
 * The step's model, if it can be a step: in the catalog, taking requests, not run through an
 * endpoint of its own (style training makes a style, not files a graph can pass on), and run by
 * this server's own engines: a node app's steps run inside its job, in-process, so a model bound
 * to remote workers (`remote`) cannot be a step. `where` starts every refusal's message
 * (`graph.steps[1].model`, `step 'vid'`).
 */
export function stepModel(catalog: Catalog, model: string, where: string, phase: StepPhase, remote: RemoteModels = NO_REMOTE): StepEntry {
  const entry = catalog.get(model);
  if (!entry) throw invalid(`${where}: no model '${model}' in the catalog (GET /models lists them)`);
  if (entry.route) throw invalid(`${where}: model '${model}' cannot be a step (it is run through ${entry.route}); steps call generation models`);
  const pool = remote.get(model);
  if (pool !== undefined) {
    throw invalid(`${where}: model '${model}' runs on remote workers (pool '${pool}'), and a node app's steps run on this server's own engines; it cannot be a step`);
  }
  const available = phase.at === 'run' ? entry.validate !== undefined : isAvailable(entry, phase.nowMs);
  if (!available || !entry.validate) {
    if (phase.at === 'execute' && entry.deprecation) throw sunsetError(entry.path, entry.deprecation, phase.publicUrl);
    const instead = entry.deprecation?.replacement ? `; use '${entry.deprecation.replacement}'` : '';
    const why = entry.request && entry.deprecation ? `reached its sunset date ${entry.deprecation.sunsetDate}` : 'is retired';
    throw invalid(`${where}: model '${model}' ${why} and takes no requests${instead}`);
  }
  return entry as StepEntry;
}

/**
 * The step's body: its input with every reference replaced from `scope`, validated (its defaults
 * filled in) by its model's validator, the one POST /generate uses. Aliases are not renamed: a
 * graph uses the current field names. Throws the GraphError or the validator's refusal as is.
 */
export function stepRequest(entry: StepEntry, step: GraphStep, scope: GraphScope, path: string): Record<string, unknown> {
  // A copy: validation fills in defaults, and a whole reference is the inputs' (or a schema's) own object.
  const body = structuredClone(substitute(step.input, scope, path)) as Record<string, unknown>;
  const validate: BodyValidator = entry.validate;
  validate(body);
  return body;
}

/**
 * The step's model and body as execute checks them and a run builds them. A refusal is
 * invalid_request naming the step: a graph's message names the field already
 * (`steps.img.input.prompt: input 'x' was not given`), a model's is prefixed `step 'img': `.
 */
export function checkedStep(
  catalog: Catalog,
  step: GraphStep,
  scope: GraphScope,
  phase: StepPhase,
  remote: RemoteModels = NO_REMOTE,
): { entry: StepEntry; body: Record<string, unknown> } {
  const entry = stepModel(catalog, step.model, `step '${step.id}'`, phase, remote);
  try {
    return { entry, body: stepRequest(entry, step, scope, `steps.${step.id}.input`) };
  } catch (err) {
    if (err instanceof GraphError) throw invalid(err.message);
    if (err instanceof DomainError && err.code === 'invalid_request') throw new DomainError(err.code, `step '${step.id}': ${err.message}`, err.details);
    throw err;
  }
}

/**
 * The node-app engine's `prepare`: a step's body at run time, or a refusal naming the step (a
 * model bound to remote workers since the job was admitted fails the job at once).
 */
export function stepPreparer(catalog: Catalog, remote: RemoteModels = NO_REMOTE): (step: GraphStep, scope: GraphScope) => Record<string, unknown> {
  return (step, scope) => checkedStep(catalog, step, scope, { at: 'run' }, remote).body;
}
