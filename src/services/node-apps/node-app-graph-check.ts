import { namedValue, sampleOf } from '../../lib/json-schema-sample.js';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { GraphError, outputRef, parseGraph, refText, refsOf, wholeRef } from '../../domain/node-app-graph.js';
import type { GraphStep, NodeAppGraph } from '../../domain/node-app-graph.js';
import { stepOutputStandIns } from '../../domain/node-app-plan.js';
import type { Catalog } from '../../models/catalog.js';
import type { JsonObject } from '../../store/node-app-store.js';
import { NODE_APP_LIMITS } from './node-app-rules.js';
import { stepModel, stepRequest } from './node-app-steps.js';
import type { RemoteModels, StepEntry } from './node-app-steps.js';
import { isPlainObject as isObject } from '../../lib/plain-object.js';

/**
 * Publish-time checks of a version's graph (docs/node-apps.md, "What publishing checks"): the
 * language's rules, then the catalog, the version's schemas, and each step's body against its
 * model with representative values in place of the references. Every refusal is invalid_request
 * naming where in the graph.
 */

type Schema = Readonly<Record<string, unknown>>;

const propertiesOf = (schema: Schema): Schema => (isObject(schema.properties) ? schema.properties : {});
const has = (o: object, k: string) => Object.hasOwn(o, k);

export interface VersionSchemas {
  readonly input: JsonObject;
  readonly output: JsonObject;
}

/** The graph, parsed and checked, ready to be stored with the version; or invalid_request. */
export function checkGraph(value: unknown, schemas: VersionSchemas, catalog: Catalog, nowMs: number, remote?: RemoteModels): NodeAppGraph {
  if (Buffer.byteLength(JSON.stringify(value) ?? '') > NODE_APP_LIMITS.graphMaxBytes) throw invalid('graph must be at most 1 MiB of JSON');
  let graph: NodeAppGraph;
  try {
    graph = parseGraph(value);
  } catch (err) {
    if (err instanceof GraphError) throw invalid(err.message);
    throw err;
  }
  const entries = graph.steps.map((step, i) => stepModel(catalog, step.model, `graph.steps[${i}].model`, { at: 'publish', nowMs }, remote));
  const inputs = propertiesOf(schemas.input);
  graph.steps.forEach((step, i) => {
    for (const { path, ref } of refsOf(step.input, `graph.steps[${i}].input`)) {
      if (ref.kind === 'input' && !has(inputs, ref.name)) throw invalid(`${path}: input '${ref.name}' is not in the input schema's properties`);
    }
  });
  checkOutputs(graph, propertiesOf(schemas.output), schemas.output.required as readonly string[]);
  checkUsed(graph);
  // Earlier steps' results stand in as execute's do: a body passing here passes there with the same inputs.
  const standIns = stepOutputStandIns(graph, 'check');
  graph.steps.forEach((step, i) => checkBody(step, i, entries[i]!, inputs, standIns));
  return graph;
}

/**
 * Every graph output is a property of the output schema, every required property is a graph
 * output, and no two outputs name the same step result (output_key_mapping maps results to names).
 */
function checkOutputs(graph: NodeAppGraph, outputs: Schema, required: readonly string[]): void {
  const byResult = new Map<string, string>();
  for (const name of Object.keys(graph.outputs)) {
    if (!has(outputs, name)) throw invalid(`graph.outputs.${name}: output '${name}' is not in the output schema's properties`);
    const result = refText(outputRef(graph, name));
    const first = byResult.get(result);
    if (first !== undefined) throw invalid(`graph.outputs.${name}: names the same result as graph.outputs.${first} (${result}); give each step result one output name`);
    byResult.set(result, name);
  }
  const missing = required.find((name) => !has(graph.outputs, name));
  if (missing !== undefined) throw invalid(`graph.outputs: the output schema requires '${missing}', which no graph output gives`);
}

/** A step whose results reach no output, directly or through other steps, would be run and billed for nothing. */
function checkUsed(graph: NodeAppGraph): void {
  const used = new Set(Object.keys(graph.outputs).map((name) => outputRef(graph, name).step));
  // Steps may come in any order in the file: repeat until no step is added.
  for (let grew = true; grew; ) {
    grew = false;
    for (const step of graph.steps.filter((s) => used.has(s.id))) {
      for (const { ref } of refsOf(step.input, 'input')) {
        if (ref.kind === 'step' && !used.has(ref.step)) {
          used.add(ref.step);
          grew = true;
        }
      }
    }
  }
  const i = graph.steps.findIndex((s) => !used.has(s.id));
  if (i >= 0) throw invalid(`graph.steps[${i}] (${graph.steps[i]!.id}): no output uses its results, directly or through another step`);
}

/**
 * The step's body with a representative value in place of each reference (docs/node-apps.md),
 * through the model's validator. A body refused with those values is refused, since it cannot be
 * what the author meant: a field no input can fill, a required field left out, an input of a type
 * the field never takes.
 */
function checkBody(step: GraphStep, i: number, entry: StepEntry, inputs: Schema, standIns: Readonly<Record<string, string[]>>): void {
  const where = `graph.steps[${i}].input`;
  const fields = propertiesOf((entry.request ?? {}) as Schema);
  // The body field an input fills whole, whose own values may stand in for an unconstrained input.
  const fills = new Map<string, string>();
  for (const [key, v] of Object.entries(step.input)) {
    const ref = wholeRef(v, `${where}.${key}`);
    if (ref?.kind === 'input' && !fills.has(ref.name) && has(fields, key)) fills.set(ref.name, key);
  }
  const values = new Map<string, unknown>();
  for (const { ref } of refsOf(step.input, where)) {
    if (ref.kind !== 'input') continue;
    const field = fills.get(ref.name);
    values.set(ref.name, representative(inputs[ref.name] as Schema, field === undefined ? undefined : (fields[field] as Schema)));
  }
  // fromEntries keeps an input named __proto__ an input.
  const scope = { inputs: Object.fromEntries(values), steps: standIns };
  try {
    stepRequest(entry, step, scope, where);
  } catch (err) {
    if (err instanceof DomainError || err instanceof GraphError) throw invalid(`graph.steps[${i}] (${step.id}): ${err.message}`);
    throw err;
  }
}

function fitsType(value: unknown, type: unknown): boolean {
  const types = Array.isArray(type) ? type : type === undefined ? undefined : [type];
  return (
    types === undefined ||
    types.some(
      (t) =>
        (t === 'string' && typeof value === 'string') ||
        (t === 'number' && typeof value === 'number') ||
        (t === 'integer' && Number.isInteger(value)) ||
        (t === 'boolean' && typeof value === 'boolean') ||
        (t === 'array' && Array.isArray(value)) ||
        (t === 'object' && isObject(value)) ||
        (t === 'null' && value === null),
    )
  );
}

/**
 * An input's representative value: one its own schema names; else one the body field it fills
 * names, if the input's type allows it; else a sample of its type.
 */
export function representative(input: Schema, field: Schema | undefined): unknown {
  const own = namedValue(input);
  if (own) return own.value;
  const hint = namedValue(field);
  if (hint && fitsType(hint.value, isObject(input) ? input.type : undefined)) return hint.value;
  return sampleOf(input);
}
