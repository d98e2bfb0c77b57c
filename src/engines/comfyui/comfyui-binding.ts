import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../../config/readers.js';
import { isPlainObject } from '../../lib/plain-object.js';

/** An API-format ComfyUI workflow: node id to `{class_type, inputs}` ("Save (API Format)" in ComfyUI). */
export type ComfyPrompt = Readonly<Record<string, { readonly class_type: string; readonly inputs: Readonly<Record<string, unknown>> }>>;

/** Where a request field goes in the workflow. */
export interface ComfyTarget {
  readonly node: string;
  readonly input: string;
}

/** A model's ComfyUI binding, checked: the workflow, request field to its targets, the output nodes (all when absent). */
export interface ComfyWorkflow {
  readonly prompt: ComfyPrompt;
  readonly inputs: Readonly<Record<string, readonly ComfyTarget[]>>;
  readonly outputNodes?: readonly string[];
}

const MAX_WORKFLOW_BYTES = 4 * 1024 * 1024;
const FIELD_RE = /^[A-Za-z0-9_.-]{1,100}$/;

function readPrompt(raw: unknown, where: string, configDir: string): ComfyPrompt {
  let value = raw;
  if (typeof raw === 'string') {
    const path = isAbsolute(raw) ? raw : resolve(configDir, raw);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`${where}.workflow: cannot read ${raw} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (text.length > MAX_WORKFLOW_BYTES) throw new ConfigError(`${where}.workflow: ${raw} is larger than 4 MiB`);
    try {
      value = JSON.parse(text);
    } catch {
      throw new ConfigError(`${where}.workflow: ${raw} is not JSON`);
    }
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    throw new ConfigError(`${where}.workflow must be an API-format workflow ({"<node id>": {"class_type", "inputs"}}, ComfyUI's "Save (API Format)") or the path of one`);
  }
  if (isPlainObject(value.nodes) || Array.isArray(value.nodes)) throw new ConfigError(`${where}.workflow is a UI-format workflow: export it with ComfyUI's "Save (API Format)"`);
  for (const [id, node] of Object.entries(value)) {
    if (!isPlainObject(node) || typeof node.class_type !== 'string' || node.class_type === '' || !isPlainObject(node.inputs)) {
      throw new ConfigError(`${where}.workflow: node '${id.slice(0, 60)}' must be {"class_type": "...", "inputs": {...}}`);
    }
  }
  return value as unknown as ComfyPrompt;
}

function readTarget(raw: unknown, where: string, prompt: ComfyPrompt): ComfyTarget {
  if (!isPlainObject(raw) || typeof raw.node !== 'string' || typeof raw.input !== 'string' || raw.input === '' || Object.keys(raw).some((k) => k !== 'node' && k !== 'input')) {
    throw new ConfigError(`${where} must be {"node": "<node id>", "input": "<input name>"} or an array of them`);
  }
  if (!Object.hasOwn(prompt, raw.node)) throw new ConfigError(`${where}: the workflow has no node '${raw.node.slice(0, 60)}'`);
  return Object.freeze({ node: raw.node, input: raw.input });
}

/**
 * A custom model's `upstream` for a `comfyui:<name>` engine: `workflow` (inline or a file relative to
 * the config file), `inputs` (request field to `{node, input}` or an array of them) and the optional
 * `output_nodes`. Throws ConfigError naming the key.
 */
export function readComfyWorkflow(binding: { workflow?: unknown; inputs?: unknown; outputNodes?: unknown }, where: string, configDir: string): ComfyWorkflow {
  if (binding.workflow === undefined) throw new ConfigError(`${where}.workflow is required for a ComfyUI model: an API-format workflow or the path of one`);
  const prompt = readPrompt(binding.workflow, where, configDir);
  const inputs: Record<string, readonly ComfyTarget[]> = {};
  if (binding.inputs !== undefined) {
    if (!isPlainObject(binding.inputs)) throw new ConfigError(`${where}.inputs must be an object of request field to {"node", "input"}`);
    for (const [field, raw] of Object.entries(binding.inputs)) {
      if (!FIELD_RE.test(field)) throw new ConfigError(`${where}.inputs: '${field.slice(0, 60)}' is not a request field name`);
      const list = Array.isArray(raw) ? raw : [raw];
      if (list.length === 0) throw new ConfigError(`${where}.inputs.${field} names no node`);
      inputs[field] = Object.freeze(list.map((t, i) => readTarget(t, `${where}.inputs.${field}${Array.isArray(raw) ? `[${i}]` : ''}`, prompt)));
    }
  }
  let outputNodes: string[] | undefined;
  if (binding.outputNodes !== undefined) {
    const list = binding.outputNodes;
    if (!Array.isArray(list) || list.length === 0 || !list.every((n) => typeof n === 'string')) throw new ConfigError(`${where}.output_nodes must be a non-empty array of node ids`);
    const missing = list.find((n: string) => !Object.hasOwn(prompt, n));
    if (missing !== undefined) throw new ConfigError(`${where}.output_nodes: the workflow has no node '${String(missing).slice(0, 60)}'`);
    outputNodes = [...(list as string[])];
  }
  return Object.freeze({ prompt, inputs: Object.freeze(inputs), ...(outputNodes ? { outputNodes: Object.freeze(outputNodes) } : {}) });
}
