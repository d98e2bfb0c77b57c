import { isPlainObject } from '../../lib/plain-object.js';
import type { OutputFile } from '../engine.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { keepUpstreamOutputs } from '../upstream/upstream-outputs.js';
import type { ComfyWorkflow } from './comfyui-binding.js';
import type { ComfyHttp } from './comfyui-http.js';

/**
 * What a finished prompt left in ComfyUI (`/history/{id}`, execution.py's history result:
 * `{prompt, outputs: {<node>: {images|gifs|videos|audio: [{filename, subfolder, type}]}},
 * status: {status_str, completed, messages: [[type, data]...]}}`) and how its failures read.
 */
export interface HistoryEntry {
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly status?: { readonly status_str?: string; readonly completed?: boolean; readonly messages?: readonly unknown[] };
}

const FILE_KEYS = ['images', 'gifs', 'videos', 'video', 'audio'];
const MAX_MESSAGE = 300;

/** Text ComfyUI wrote, made fit for a client: its first line, paths blanked, cut short. */
export function cleanComfyText(text: unknown): string {
  const first = String(text ?? '').split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const noPaths = first.replace(/(?:[A-Za-z]:)?(?:[\\/][\w.+@-]+){2,}[\\/]?/g, '<path>').trim();
  return noPaths.length > MAX_MESSAGE ? `${noPaths.slice(0, MAX_MESSAGE)}…` : noPaths;
}

/** An `execution_error` (socket message or history status message) as the job's failure. */
export function executionFailure(data: Readonly<Record<string, unknown>>): UpstreamError {
  const node = typeof data.node_type === 'string' ? `${cleanComfyText(data.node_type)}${typeof data.node_id === 'string' ? ` (node ${cleanComfyText(data.node_id)})` : ''}` : 'a node';
  const message = cleanComfyText(data.exception_message) || cleanComfyText(data.exception_type) || 'failed';
  return new UpstreamError('failed', `ComfyUI: ${node} failed: ${message}`);
}

/** The failure a finished-with-error history entry tells, or undefined when it succeeded. */
export function historyFailure(entry: HistoryEntry): UpstreamError | undefined {
  if (entry.status?.status_str !== 'error') return undefined;
  for (const m of entry.status.messages ?? []) {
    if (!Array.isArray(m) || !isPlainObject(m[1])) continue;
    if (m[0] === 'execution_error') return executionFailure(m[1]);
    if (m[0] === 'execution_interrupted') return new UpstreamError('failed', 'ComfyUI: the prompt was interrupted there');
  }
  return new UpstreamError('failed', 'ComfyUI: the prompt ended with an error');
}

/** Whether a history entry is final: completed, failed, or from a version that kept no status. */
export function isFinished(entry: HistoryEntry): boolean {
  if (!entry.status) return true;
  return entry.status.completed === true || entry.status.status_str === 'error';
}

/** A 400 to `POST /prompt`: the node `node_errors` or `error.extra_info` names, else ComfyUI's message. */
export function promptRejection(body: unknown): UpstreamError {
  const b = isPlainObject(body) ? body : {};
  const error = isPlainObject(b.error) ? b.error : typeof b.error === 'string' ? { message: b.error } : {};
  if (isPlainObject(b.node_errors)) {
    for (const [id, node] of Object.entries(b.node_errors)) {
      if (!isPlainObject(node)) continue;
      const first = Array.isArray(node.errors) && isPlainObject(node.errors[0]) ? node.errors[0] : {};
      const said = [cleanComfyText(first.message), cleanComfyText(first.details)].filter(Boolean).join(': ');
      return new UpstreamError('rejected', `ComfyUI refused node ${cleanComfyText(id)}${typeof node.class_type === 'string' ? ` (${cleanComfyText(node.class_type)})` : ''}: ${said || 'invalid'}`, { status: 400 });
    }
  }
  const extra = isPlainObject(error.extra_info) ? error.extra_info : {};
  const named = typeof extra.node_id === 'string' ? ` node ${cleanComfyText(extra.node_id)}${typeof extra.class_type === 'string' ? ` (${cleanComfyText(extra.class_type)})` : ''}` : '';
  return new UpstreamError('rejected', `ComfyUI refused the prompt${named}: ${cleanComfyText(error.message) || 'invalid prompt'}`, { status: 400 });
}

interface ComfyFile {
  readonly filename: string;
  readonly subfolder: string;
  readonly type: string;
}

/** The files the output nodes list: all of `output_nodes` when set, else every node's `output` files (not `temp` previews). */
export function outputFilesOf(entry: HistoryEntry, workflow: ComfyWorkflow): ComfyFile[] {
  const outputs = isPlainObject(entry.outputs) ? entry.outputs : {};
  const nodes = workflow.outputNodes ?? Object.keys(outputs);
  const files: ComfyFile[] = [];
  for (const id of nodes) {
    const node = outputs[id];
    if (!isPlainObject(node)) continue;
    for (const key of FILE_KEYS) {
      const list = node[key];
      if (!Array.isArray(list)) continue;
      for (const f of list) {
        if (!isPlainObject(f) || typeof f.filename !== 'string' || f.filename === '') continue;
        const type = typeof f.type === 'string' ? f.type : 'output';
        if (!workflow.outputNodes && type !== 'output') continue;
        files.push({ filename: f.filename, subfolder: typeof f.subfolder === 'string' ? f.subfolder : '', type });
      }
    }
  }
  return files;
}

/**
 * ComfyUI before 2024-01-11 keeps no `status` in a history entry: a prompt whose node raised is
 * stored like a finished one, with the outputs of the nodes that ran before. The follower has
 * waited for the socket's `execution_error` by then; without it, an entry of no output file is
 * the prompt failing there, not ComfyUI answering nonsense.
 */
export function statuslessFailure(entry: HistoryEntry, files: readonly unknown[]): UpstreamError | undefined {
  if (entry.status || files.length > 0) return undefined;
  return new UpstreamError('failed', 'ComfyUI: the prompt ended without an output file (this ComfyUI keeps no status; its log tells which node failed)');
}

/** Reads each output file with `/view` and keeps it as the upstream kit keeps every upstream's outputs. */
export function storeComfyOutputs(http: ComfyHttp, files: readonly ComfyFile[], outDir: string, allowed: readonly string[], maxBytes: number): Promise<OutputFile[]> {
  return keepUpstreamOutputs(files, (file, i) => http.view(file, maxBytes, `output ${i + 1}`), outDir, allowed, "the prompt's output nodes list no file");
}
