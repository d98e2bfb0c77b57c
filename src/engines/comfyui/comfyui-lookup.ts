import { isPlainObject } from '../../lib/plain-object.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { ComfyHttp } from './comfyui-http.js';

/**
 * Where a prompt is in ComfyUI, read without holding ComfyUI's lists: `GET /queue` (server.py
 * `get_queue`: `{queue_running, queue_pending}` of `[number, prompt_id, prompt, extra_data,
 * outputs_to_execute]`, whole, no paging) and `GET /history?max_items=` (execution.py
 * `get_history`: the newest `max_items` entries `{<prompt_id>: {prompt: <queue item>, outputs,
 * status}}`) are streamed and only each prompt's id and `extra_data.client_id` kept. A web-UI
 * prompt's `extra_data.extra_pnginfo` (its whole UI workflow) is skipped unread.
 */

export interface PromptRef {
  readonly id: string;
  readonly clientId: string | undefined;
}

export interface QueueView {
  readonly running: readonly PromptRef[];
  readonly pending: readonly PromptRef[];
}

/**
 * The newest history entries searched for our client id. `/history` has an `offset` only since
 * v0.3.60, counted from the oldest entry, and ComfyUI publishes no history length, so the newest
 * entries cannot be paged backwards: they are read in one streamed answer.
 */
export const HISTORY_SCAN = 256;

/** Collects `[id, clientId]` per list item: `item[1]` and `item[3].client_id` under `list` (or under each key at the top). */
class RefCollector {
  readonly #refs = new Map<string, { id?: string; clientId?: string }>();

  add(slot: string, field: 'id' | 'clientId', value: string): void {
    const ref = this.#refs.get(slot) ?? {};
    ref[field] = value;
    this.#refs.set(slot, ref);
  }

  refs(): PromptRef[] {
    return [...this.#refs.values()].filter((r) => r.id !== undefined).map((r) => ({ id: r.id!, clientId: r.clientId }));
  }
}

export async function readQueue(http: ComfyHttp): Promise<QueueView> {
  const lists = { queue_running: new RefCollector(), queue_pending: new RefCollector() };
  await http.scan('/queue', 4, (path, value) => {
    const [list, index, at, key] = path;
    if (list !== 'queue_running' && list !== 'queue_pending') return;
    if (path.length === 3 && at === 1) lists[list].add(String(index), 'id', value);
    else if (path.length === 4 && at === 3 && key === 'client_id') lists[list].add(String(index), 'clientId', value);
  });
  return { running: lists.queue_running.refs(), pending: lists.queue_pending.refs() };
}

/** The newest `max` history entries: their ids and client ids. */
export async function recentHistory(http: ComfyHttp, max: number): Promise<PromptRef[]> {
  const entries = new RefCollector();
  await http.scan(`/history?max_items=${max}`, 4, (path, value) => {
    const [key, field, at, name] = path;
    if (typeof key !== 'string' || field !== 'prompt') return;
    if (path.length === 3 && at === 1) entries.add(key, 'id', value);
    else if (path.length === 4 && at === 3 && name === 'client_id') entries.add(key, 'clientId', value);
  });
  return entries.refs();
}

/** Whether `/history/{id}` has the prompt (one entry: read whole). */
export async function inHistory(http: ComfyHttp, promptId: string): Promise<boolean> {
  const mine = await http.getJson(`/history/${encodeURIComponent(promptId)}`);
  return isPlainObject(mine) && isPlainObject(mine[promptId]);
}

/**
 * The prompt of a job in ComfyUI's queue or history: by its id, and, when `byClient` (ComfyUI may
 * have minted another id we never stored), by our client id in the queue and the newest history.
 */
export async function findPrompt(http: ComfyHttp, promptId: string, clientId: string, byClient: boolean): Promise<string | undefined> {
  const queue = await readQueue(http);
  for (const ref of [...queue.running, ...queue.pending]) {
    if (ref.id === promptId || (byClient && ref.clientId === clientId)) return ref.id;
  }
  if (await inHistory(http, promptId)) return promptId;
  if (!byClient) return undefined;
  return (await recentHistory(http, HISTORY_SCAN)).find((ref) => ref.clientId === clientId)?.id;
}

/** The first version whose `POST /interrupt {prompt_id}` interrupts only that prompt (Comfy-Org/ComfyUI#9607). */
const TARGETED_INTERRUPT: readonly number[] = [0, 3, 57];

/**
 * Whether the server's `/interrupt` honours a `prompt_id`: by `system.comfyui_version` in
 * `GET /system_stats` (there since 2024-08; a server without it is older than the targeted
 * interrupt). A build between two releases reports the older one: taken as not honouring it.
 */
export async function honoursTargetedInterrupt(http: ComfyHttp): Promise<boolean> {
  // Unknown is old: the caller then interrupts only a prompt it knows runs.
  const stats = await http.json('GET', '/system_stats').catch((err: unknown) => {
    if (err instanceof UpstreamError) return { status: 0, body: undefined };
    throw err;
  });
  const system = isPlainObject(stats.body) && isPlainObject(stats.body.system) ? stats.body.system : {};
  const match = typeof system.comfyui_version === 'string' ? /^v?(\d+)\.(\d+)\.(\d+)/.exec(system.comfyui_version) : null;
  if (stats.status !== 200 || !match) return false;
  const version = match.slice(1, 4).map(Number);
  for (let i = 0; i < 3; i++) if (version[i] !== TARGETED_INTERRUPT[i]) return version[i]! > TARGETED_INTERRUPT[i]!;
  return true;
}
