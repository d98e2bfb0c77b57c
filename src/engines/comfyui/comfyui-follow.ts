import type { Clock } from '../../lib/clock.js';
import { isPlainObject } from '../../lib/plain-object.js';
import type { EngineContext } from '../engine.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { ComfyHttp } from './comfyui-http.js';
import { readQueue } from './comfyui-lookup.js';
import type { QueueView } from './comfyui-lookup.js';
import type { HistoryEntry } from './comfyui-results.js';
import { executionFailure, historyFailure, isFinished } from './comfyui-results.js';
import type { ComfyuiSettings } from '../../config/comfyui-settings.js';
import { openProgressSocket } from './comfyui-socket.js';
import type { ComfyMessage, ProgressSocket } from './comfyui-socket.js';

/** How long opening the WebSocket may take before the run polls instead. */
const SOCKET_OPEN_MS = 5_000;
/** Between two /history checks while the socket is up (it wakes the run early on a final message). */
const SOCKET_CHECK_MS = 5_000;
/** Polls in a row that found the prompt neither queued nor in history before it counts as lost. */
const MISSING_POLLS = 3;
/** How long a history entry without `status` (ComfyUI before 2024-01-11) waits for the socket to say how the prompt ended. */
const STATUSLESS_WAIT_MS = 2_000;
/** Messages that say a prompt ended (`executing` with no node: ComfyUI's last message for a prompt, in every version). */
const ENDS = new Set(['execution_success', 'execution_error', 'execution_interrupted']);

/**
 * Follows one prompt to its end: the socket's messages move the job's stages and progress
 * (`execution_start` -> processing, `progress` -> sampling with value/max) and end it early
 * (`execution_error`, `execution_interrupted`); `/history/{id}` is the truth checked for the end,
 * polled at `poll_interval_ms` when there is no socket and slower beside one.
 */
export class ComfyFollow {
  #socket: ProgressSocket | undefined;
  readonly #events: ComfyMessage[] = [];
  #wake: AbortController = new AbortController();
  #processing = false;
  #sampling = false;
  /** Prompts the socket saw start, and end (only ours: ComfyUI sends a prompt's messages to its own client). */
  readonly #started = new Set<string>();
  readonly #ended = new Set<string>();

  constructor(
    private readonly http: ComfyHttp,
    private readonly ctx: EngineContext,
    private readonly settings: ComfyuiSettings,
    private readonly clock: Clock,
    private readonly retrying: <T>(call: () => Promise<T>) => Promise<T>,
  ) {}

  /** Opens the socket for `clientId` before the prompt is queued, so no message of it is missed. */
  async connect(clientId: string): Promise<void> {
    const push = (m: ComfyMessage) => {
      const id = typeof m.data.prompt_id === 'string' ? m.data.prompt_id : undefined;
      if (id !== undefined && this.#started.size < 1_000) {
        if (m.type === 'execution_start' || (m.type === 'executing' && m.data.node != null)) this.#started.add(id);
        if (ENDS.has(m.type) || (m.type === 'executing' && m.data.node == null)) this.#ended.add(id);
      }
      if (this.#events.length < 10_000) this.#events.push(m);
      this.#wake.abort();
    };
    this.#socket = await openProgressSocket(this.http.baseUrl, clientId, Math.min(SOCKET_OPEN_MS, this.settings.requestTimeoutMs), push, () => this.#wake.abort());
  }

  close(): void {
    this.#socket?.close();
  }

  get socketUsed(): boolean {
    return this.#socket !== undefined;
  }

  /** What the socket saw of a prompt: `running` (started, not ended), `ended`, or `unknown` (no socket, or it missed the start). */
  seen(promptId: string): 'running' | 'ended' | 'unknown' {
    if (this.#ended.has(promptId)) return 'ended';
    return this.#started.has(promptId) ? 'running' : 'unknown';
  }

  /** The prompt's history entry once it finished well; throws an UpstreamError when it failed. */
  async until(promptId: string): Promise<HistoryEntry> {
    let missing = 0;
    for (;;) {
      const final = await this.#drain(promptId);
      const socket = this.#socket?.alive() ?? false;
      // The queue first: a prompt leaves it for the history at once, so looking in this order never misses it.
      const queue = socket ? undefined : await this.retrying(() => readQueue(this.http));
      const entry = await this.retrying(() => this.#history(promptId));
      if (entry && isFinished(entry)) {
        if (!entry.status) await this.#awaitEnd(promptId);
        const failure = historyFailure(entry);
        if (failure) throw failure;
        await this.#drain(promptId);
        await this.#stage('sampling');
        return entry;
      }
      if (queue !== undefined && !entry) {
        if (inList(queue.running, promptId)) await this.#stage('processing');
        if (inList(queue.running, promptId) || inList(queue.pending, promptId)) missing = 0;
        else if (++missing >= MISSING_POLLS) throw new UpstreamError('failed', 'ComfyUI no longer has the prompt (was it restarted?)');
      }
      if (!final) await this.#sleep();
    }
  }

  /** Acts on the socket's messages about the prompt so far; true when one says it finished. */
  async #drain(promptId: string): Promise<boolean> {
    let final = false;
    for (const m of this.#events.splice(0)) {
      if (m.data.prompt_id !== promptId) continue;
      if (m.type === 'execution_start') await this.#stage('processing');
      else if (m.type === 'progress') {
        await this.#stage('sampling');
        const value = Number(m.data.value);
        const max = Number(m.data.max);
        if (max > 0 && value >= 0) this.ctx.progress(Math.min(1, value / max));
      } else if (m.type === 'execution_error') throw executionFailure(m.data);
      else if (m.type === 'execution_interrupted') throw new UpstreamError('failed', 'ComfyUI: the prompt was interrupted there');
      else if (m.type === 'execution_success' || m.type === 'executed') final = true;
    }
    return final;
  }

  /**
   * ComfyUI before 2024-01-11 writes a history entry without `status`, failed or not; its
   * `execution_error` went to the socket just before, and may still be on the way. Waits briefly
   * for the socket's last word on the prompt (the drain throws its failure).
   */
  async #awaitEnd(promptId: string): Promise<void> {
    const until = this.clock.nowMs() + STATUSLESS_WAIT_MS;
    for (;;) {
      await this.#drain(promptId);
      const left = until - this.clock.nowMs();
      if (this.#ended.has(promptId) || !this.#socket?.alive() || left <= 0) return;
      await this.#sleep(left);
    }
  }

  async #history(promptId: string): Promise<HistoryEntry | undefined> {
    const all = await this.http.getJson(`/history/${encodeURIComponent(promptId)}`);
    const entry = isPlainObject(all) ? all[promptId] : undefined;
    return isPlainObject(entry) ? (entry as HistoryEntry) : undefined;
  }

  /** Stages in order, each once: `sampling` passes `processing` first. */
  async #stage(stage: 'processing' | 'sampling'): Promise<void> {
    if (!this.#processing) {
      this.#processing = true;
      await this.ctx.stage('processing');
    }
    if (stage === 'sampling' && !this.#sampling) {
      this.#sampling = true;
      await this.ctx.stage('sampling');
    }
  }

  /** Sleeps until the next check, woken early by a socket message or its loss; rejects with the run's stop reason. */
  async #sleep(atMost = Infinity): Promise<void> {
    if (this.#events.length > 0) return;
    this.#wake = new AbortController();
    // Judged now, not before the last check: the socket may have dropped meanwhile.
    const ms = Math.min(atMost, this.#socket?.alive() ? Math.max(SOCKET_CHECK_MS, this.settings.pollIntervalMs) : this.settings.pollIntervalMs);
    try {
      await this.clock.sleep(ms, AbortSignal.any([this.ctx.signal, this.#wake.signal]));
    } catch (err) {
      if (this.ctx.signal.aborted) throw this.ctx.signal.reason;
      if (!this.#wake.signal.aborted) throw err;
    }
  }
}

function inList(list: QueueView['running'], promptId: string): boolean {
  return list.some((ref) => ref.id === promptId);
}
