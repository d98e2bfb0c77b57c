import { isPlainObject as isObject } from '../lib/plain-object.js';

/**
 * The graph a node-app version may carry (docs/node-apps.md): steps that each call a catalog model
 * with a body built from the app's inputs and earlier steps' outputs, and named outputs taken from
 * steps' results. This module is the language alone: its shape, its references, its order and its
 * substitution. Whether a model exists or accepts a body is the services' business.
 *
 *   {"steps": [{"id": "img", "model": "image/vendor-a/model-a-2/medium",
 *               "input": {"prompt": "{{inputs.prompt}}"}},
 *              {"id": "vid", "model": "video/vendor-e/model-e-1",
 *               "input": {"start_image": "{{steps.img.urls[0]}}"}}],
 *    "outputs": {"image": "{{steps.img.urls[0]}}", "video": "{{steps.vid.urls[0]}}"}}
 *
 * A string that is exactly one `{{ref}}` becomes the referenced value, whatever its JSON type; a
 * reference inside longer text is written into the text (JSON for objects and arrays). An output
 * is exactly one step reference.
 */

export interface GraphStep {
  /** `[a-z][a-z0-9_-]*`, unique in the graph. */
  readonly id: string;
  /** A catalog model path, e.g. `image/vendor-a/model-a-2/medium`. */
  readonly model: string;
  /** The step's request body, with `{{...}}` references anywhere in its string values. */
  readonly input: Readonly<Record<string, unknown>>;
}

export interface NodeAppGraph {
  readonly steps: readonly GraphStep[];
  /** Output name → `{{steps.<id>.urls[<n>]}}`. */
  readonly outputs: Readonly<Record<string, string>>;
}

/** `inputs.<name>` or `steps.<id>.urls[<n>]`. */
export type GraphRef = { readonly kind: 'input'; readonly name: string } | { readonly kind: 'step'; readonly step: string; readonly index: number };

/** What references resolve against at one point of a run (or a check). */
export interface GraphScope {
  readonly inputs: Readonly<Record<string, unknown>>;
  /** Each finished step's result URLs, in the order of its result. */
  readonly steps: Readonly<Record<string, readonly string[]>>;
}

/**
 * `refsMax` references in a whole graph and `textMax` characters in a string with references written
 * into it: a graph repeating a large input in long text could otherwise build strings of gigabytes.
 */
export const GRAPH_LIMITS = { stepsMax: 20, outputsMax: 20, refsMax: 256, textMax: 256 * 1024 } as const;

/** A graph that breaks the language's rules; `message` names where. */
export class GraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GraphError';
  }
}

const STEP_ID_RE = /^[a-z][a-z0-9_-]{0,63}$/;
const OUTPUT_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const TEMPLATE_RE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_RE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const INPUT_REF_RE = /^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$/;
const STEP_REF_RE = /^steps\.([a-z][a-z0-9_-]*)\.urls\[(\d{1,3})\]$/;

/** One reference's text (between the braces), or a GraphError saying what is allowed. */
export function parseRef(text: string, where: string): GraphRef {
  const input = INPUT_REF_RE.exec(text);
  if (input) return { kind: 'input', name: input[1]! };
  const step = STEP_REF_RE.exec(text);
  if (step) return { kind: 'step', step: step[1]!, index: Number(step[2]) };
  throw new GraphError(`${where}: '{{${text}}}' is not a reference; use {{inputs.<name>}} or {{steps.<id>.urls[<n>]}}`);
}

/** Every reference in a value, with the JSON path of the string it is in. */
export function refsOf(value: unknown, path: string): Array<{ path: string; ref: GraphRef }> {
  const found: Array<{ path: string; ref: GraphRef }> = [];
  const walk = (v: unknown, p: string): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(TEMPLATE_RE)) found.push({ path: p, ref: parseRef(m[1]!, p) });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${p}[${i}]`));
    } else if (isObject(v)) {
      for (const [k, item] of Object.entries(v)) walk(item, `${p}.${k}`);
    }
  };
  walk(value, path);
  return found;
}

/**
 * The graph's shape, checked: steps with unique ids, a model string and an input object; outputs
 * that are each one step reference; references to steps that exist; no cycle. Inputs, models and
 * bodies are checked by the caller against the version's schema and the catalog.
 */
export function parseGraph(value: unknown): NodeAppGraph {
  if (!isObject(value)) throw new GraphError('graph must be a JSON object with steps and outputs');
  const extra = Object.keys(value).filter((k) => k !== 'steps' && k !== 'outputs');
  if (extra.length > 0) throw new GraphError(`graph: unknown key '${extra[0]}'; a graph has steps and outputs`);
  const { steps, outputs } = value;
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > GRAPH_LIMITS.stepsMax) {
    throw new GraphError(`graph.steps must be an array of 1 to ${GRAPH_LIMITS.stepsMax} steps`);
  }
  const ids = new Set<string>();
  const parsed = steps.map((s, i): GraphStep => {
    const where = `graph.steps[${i}]`;
    if (!isObject(s)) throw new GraphError(`${where} must be an object with id, model and input`);
    const unknown = Object.keys(s).find((k) => k !== 'id' && k !== 'model' && k !== 'input');
    if (unknown) throw new GraphError(`${where}: unknown key '${unknown}'; a step has id, model and input`);
    if (typeof s.id !== 'string' || !STEP_ID_RE.test(s.id)) throw new GraphError(`${where}.id must match [a-z][a-z0-9_-]* (at most 64 characters)`);
    if (ids.has(s.id)) throw new GraphError(`${where}.id: step '${s.id}' is defined twice`);
    ids.add(s.id);
    if (typeof s.model !== 'string' || s.model.length === 0) throw new GraphError(`${where}.model must be a model path`);
    if (!isObject(s.input)) throw new GraphError(`${where}.input must be an object (the model's request body)`);
    return { id: s.id, model: s.model, input: s.input };
  });
  if (!isObject(outputs) || Object.keys(outputs).length === 0 || Object.keys(outputs).length > GRAPH_LIMITS.outputsMax) {
    throw new GraphError(`graph.outputs must be an object of 1 to ${GRAPH_LIMITS.outputsMax} named outputs`);
  }
  const entries = Object.entries(outputs).map(([name, template]): [string, string] => {
    const where = `graph.outputs.${name}`;
    if (!OUTPUT_NAME_RE.test(name)) throw new GraphError(`${where}: an output name must match [A-Za-z_][A-Za-z0-9_-]*`);
    const whole = typeof template === 'string' ? WHOLE_RE.exec(template) : null;
    const ref = whole ? parseRef(whole[1]!, where) : undefined;
    if (ref?.kind !== 'step') throw new GraphError(`${where} must be exactly one step reference, like {{steps.<id>.urls[0]}}`);
    return [name, template as string];
  });
  // fromEntries defines each name as an own property: assigning `__proto__` would drop it.
  const outs: Record<string, string> = Object.fromEntries(entries);
  const graph: NodeAppGraph = { steps: parsed, outputs: outs };
  const refs = [...parsed.flatMap((s, i) => refsOf(s.input, `graph.steps[${i}].input`)), ...refsOf(outs, 'graph.outputs')];
  if (refs.length > GRAPH_LIMITS.refsMax) throw new GraphError(`graph: at most ${GRAPH_LIMITS.refsMax} references in a graph, found ${refs.length}`);
  for (const { path, ref } of refs) {
    if (ref.kind === 'step' && !ids.has(ref.step)) throw new GraphError(`${path}: no step '${ref.step}' in the graph`);
  }
  stepLevels(graph);
  return graph;
}

/** The step ids a step's input refers to. */
export function dependenciesOf(step: GraphStep): Set<string> {
  return new Set(refsOf(step.input, 'input').flatMap(({ ref }) => (ref.kind === 'step' ? [ref.step] : [])));
}

/**
 * The steps in levels: each level only needs the levels before it, so a level's steps may run in
 * parallel. A cycle (or a step that needs itself) is a GraphError naming a step on it.
 */
export function stepLevels(graph: NodeAppGraph): GraphStep[][] {
  const deps = new Map(graph.steps.map((s) => [s.id, dependenciesOf(s)]));
  const done = new Set<string>();
  const levels: GraphStep[][] = [];
  while (done.size < graph.steps.length) {
    const level = graph.steps.filter((s) => !done.has(s.id) && [...deps.get(s.id)!].every((d) => done.has(d)));
    if (level.length === 0) throw new GraphError(cycleIn(graph, deps, done));
    for (const s of level) done.add(s.id);
    levels.push(level);
  }
  return levels;
}

/**
 * Names a cycle among the steps not `done`. Each of them waits on another one not done, so
 * following those waits from any of them comes back round; the steps it passes before that may
 * only lead into the cycle, and are not named.
 */
function cycleIn(graph: NodeAppGraph, deps: ReadonlyMap<string, ReadonlySet<string>>, done: ReadonlySet<string>): string {
  const path: string[] = [];
  let at = graph.steps.find((s) => !done.has(s.id))!.id;
  while (!path.includes(at)) {
    path.push(at);
    const next = [...deps.get(at)!].find((d) => !done.has(d))!;
    if (!deps.has(next)) return `graph.steps: step '${at}' refers to step '${next}', which is not in the graph`;
    at = next;
  }
  const cycle = [...path.slice(path.indexOf(at)), at];
  if (cycle.length === 2) return `graph.steps: step '${at}' refers to its own results`;
  return `graph.steps: steps ${cycle.map((id) => `'${id}'`).join(' -> ')} form a cycle of references`;
}

/** The reference a value is exactly (a string of one `{{ref}}`), if it is one. */
export function wholeRef(value: unknown, where: string): GraphRef | undefined {
  const whole = typeof value === 'string' ? WHOLE_RE.exec(value) : null;
  return whole ? parseRef(whole[1]!, where) : undefined;
}

/** The step result an output of a parsed graph names. */
export function outputRef(graph: NodeAppGraph, name: string): Extract<GraphRef, { kind: 'step' }> {
  const ref = parseRef(WHOLE_RE.exec(graph.outputs[name] ?? '')?.[1] ?? '', `graph.outputs.${name}`);
  if (ref.kind !== 'step') throw new GraphError(`graph.outputs.${name} must be exactly one step reference`);
  return ref;
}

/** A reference as the graph writes it between the braces, spaces removed: `steps.img.urls[0]`. */
export function refText(ref: GraphRef): string {
  return ref.kind === 'input' ? `inputs.${ref.name}` : `steps.${ref.step}.urls[${ref.index}]`;
}

/** A reference's value in `scope`, or a GraphError (an absent input, a step without that URL). */
export function resolveRef(ref: GraphRef, scope: GraphScope, where: string): unknown {
  if (ref.kind === 'input') {
    if (!Object.hasOwn(scope.inputs, ref.name)) throw new GraphError(`${where}: input '${ref.name}' was not given`);
    return scope.inputs[ref.name];
  }
  // Own keys only: a step named like an Object.prototype member (`constructor`) has not run until it has.
  const urls = Object.hasOwn(scope.steps, ref.step) ? scope.steps[ref.step] : undefined;
  if (!urls) throw new GraphError(`${where}: step '${ref.step}' has not run`);
  if (ref.index >= urls.length) throw new GraphError(`${where}: step '${ref.step}' made ${urls.length} output(s), not ${ref.index + 1}`);
  return urls[ref.index];
}

/**
 * The value with every reference replaced from `scope`. An absent optional input used whole drops
 * its key (the model's default applies); inside text it is an error.
 */
export function substitute(value: unknown, scope: GraphScope, path: string): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_RE.exec(value);
    if (whole) return resolveRef(parseRef(whole[1]!, path), scope, path);
    let length = value.length;
    return value.replace(TEMPLATE_RE, (match: string, text: string) => {
      const v = resolveRef(parseRef(text, path), scope, path);
      const piece = typeof v === 'string' ? v : JSON.stringify(v);
      // Counted before the text is built, so an oversized one is never allocated.
      length += piece.length - match.length;
      if (length > GRAPH_LIMITS.textMax) throw new GraphError(`${path}: longer than ${GRAPH_LIMITS.textMax} characters once its references are written in`);
      return piece;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => substitute(item, scope, `${path}[${i}]`));
  if (isObject(value)) {
    const out: Array<[string, unknown]> = [];
    for (const [k, v] of Object.entries(value)) {
      const ref = typeof v === 'string' ? WHOLE_RE.exec(v) : null;
      const parsed = ref ? parseRef(ref[1]!, `${path}.${k}`) : undefined;
      if (parsed?.kind === 'input' && !Object.hasOwn(scope.inputs, parsed.name)) continue;
      out.push([k, substitute(v, scope, `${path}.${k}`)]);
    }
    // A body key `__proto__` stays a key (and is then refused by the model's schema).
    return Object.fromEntries(out);
  }
  return value;
}
