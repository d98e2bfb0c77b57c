import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { isPlainObject } from '../../lib/plain-object.js';
import { urlInputsOf } from '../../models/private-urls.js';
import { EngineError, RunStopped } from '../engine.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../engine.js';
import { cancelUpstream, cancelsUpstream } from '../upstream/upstream-cancel.js';
import { UpstreamError, upstreamJobError } from '../upstream/upstream-error.js';
import { handOverMedia } from '../upstream/upstream-media.js';
import { UpstreamRetry } from '../upstream/upstream-retry.js';
import type { ComfyWorkflow } from './comfyui-binding.js';
import { checkComfyui } from './comfyui-check.js';
import { ComfyFollow } from './comfyui-follow.js';
import { ComfyHttp } from './comfyui-http.js';
import { findPrompt, honoursTargetedInterrupt, readQueue } from './comfyui-lookup.js';
import { outputFilesOf, promptRejection, statuslessFailure, storeComfyOutputs } from './comfyui-results.js';
import type { ComfyuiSettings } from '../../config/comfyui-settings.js';

export interface ComfyuiModel {
  readonly workflow: ComfyWorkflow;
  /** The request schema: which fields are media URLs, uploaded to ComfyUI. */
  readonly schema: object | undefined;
  readonly outputTypes: readonly string[];
}

export interface ComfyuiEngineDeps {
  readonly settings: ComfyuiSettings;
  readonly models: ReadonlyMap<string, ComfyuiModel>;
  readonly clock: Clock;
  /** The largest output file taken from ComfyUI (`worker_output_max_bytes`). */
  readonly outputMaxBytes: number;
  readonly log?: Log;
}

/** What the engine stores with the job before queueing (jobs' upstream state): a restarted run finds the prompt by it. */
export interface ComfyState {
  readonly promptId: string;
  readonly clientId: string;
  /** The server ignored our prompt_id and minted this one (ComfyUI before v0.3.45). */
  readonly minted?: boolean;
  /** The server answered with our own prompt_id (v0.3.45 and later): it has the prompt by that id. */
  readonly kept?: boolean;
}

/**
 * Runs a ComfyUI-bound model's jobs on a ComfyUI server (docs/engines.md#comfyui-engine): uploads
 * media inputs, fills the workflow, stores a prompt id and client id, queues the prompt once (a
 * later run finds it in `/queue` or `/history` first), follows it on the WebSocket or by polling,
 * reads the output nodes' files with `/view`, and deletes or interrupts it when the job is
 * cancelled or times out.
 */
export class ComfyuiEngine implements BindableEngine {
  readonly name: string;
  readonly #deps: ComfyuiEngineDeps;

  constructor(deps: ComfyuiEngineDeps) {
    this.#deps = deps;
    this.name = `comfyui:${deps.settings.name}`;
  }

  canRun(model: string): boolean {
    return this.#deps.models.has(model);
  }

  /** The start-up check: whether the server answers now; a warning, never a refusal (comfyui-check.ts). */
  check(signal: AbortSignal): Promise<string | undefined> {
    return checkComfyui(this.#deps.settings, signal);
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const model = this.#deps.models.get(job.model);
    if (!model) throw new EngineError('engine_failed', `${this.name} does not run ${job.model}`);
    const { settings, clock } = this.#deps;
    const http = new ComfyHttp(settings.baseUrl, settings.requestTimeoutMs, ctx.signal);
    const previous = await ctx.upstream.load();
    const resumed = previous?.engine === this.name && isPlainObject(previous.state) ? (previous.state as unknown as ComfyState) : undefined;
    const clientId = typeof resumed?.clientId === 'string' ? resumed.clientId : randomUUID();
    // A prompt is looked for before it is posted again, so ComfyUI never runs one job twice: its
    // submission deduplicates, and its trouble is retried to the job's deadline (upstream-retry.ts),
    // unless a next engine may take a job ComfyUI refused at the door (fallsBack).
    const retry = new UpstreamRetry({
      signal: ctx.signal,
      deadlineMs: ctx.deadlineMs,
      clock,
      baseMs: settings.pollIntervalMs,
      submitAttempts: 1,
      deduplicates: true,
      fallsBack: ctx.canFallBack === true,
      ...(this.#deps.log ? { log: this.#deps.log } : {}),
      label: { engine: this.name },
    });
    const retrying = <T>(call: () => Promise<T>): Promise<T> => retry.follow(call);
    const follow = new ComfyFollow(http, ctx, settings, clock, retrying);
    let promptId: string | undefined;
    try {
      await follow.connect(clientId);
      // Once ComfyUI answered, the stored id is the one it has: the client-id scan is for a run that stopped before the answer.
      const byClient = resumed?.kept !== true && resumed?.minted !== true;
      if (resumed?.promptId) promptId = await retrying(() => findPrompt(http, resumed.promptId, clientId, byClient));
      if (promptId === undefined) {
        // Refused at the door (uploads or the POST): ComfyUI holds nothing, the next engine of the chain may take the job.
        const refusal = (err: unknown): never => {
          throw retry.refusal(err);
        };
        const prompt = await this.#prompt(job, model, ctx, http, (call) => retry.prepare(call)).catch(refusal);
        const ours = resumed?.promptId && !resumed.minted ? resumed.promptId : randomUUID();
        await this.#save(ctx, { promptId: ours, clientId });
        // Ours from here: a cancel while the POST is in flight (ComfyUI may have queued it already) still removes it.
        promptId = ours;
        promptId = await this.#queue(ctx, http, (call) => retry.submit(call), prompt, ours, clientId).catch(refusal);
      } else if (promptId !== resumed?.promptId) {
        await this.#save(ctx, { promptId, clientId, minted: true });
      }
      const entry = await follow.until(promptId);
      const files = outputFilesOf(entry, model.workflow);
      const failed = statuslessFailure(entry, files);
      if (failed) throw failed;
      return await storeComfyOutputs(http, files, ctx.outDir, model.outputTypes, this.#deps.outputMaxBytes);
    } catch (err) {
      const reason: unknown = ctx.signal.aborted ? ctx.signal.reason : err;
      // Cancelled, timed out, or given up on while ComfyUI may still hold the prompt (upstream-cancel.ts).
      if (promptId !== undefined && cancelsUpstream(reason) && !(err instanceof EngineError && err.notAccepted)) await this.#cancel(promptId, follow, reason);
      throw err instanceof UpstreamError ? upstreamJobError(err) : err;
    } finally {
      follow.close();
    }
  }

  /** The workflow with the request's values set at the mapped node inputs, media inputs uploaded first. */
  async #prompt(job: EngineJob, model: ComfyuiModel, ctx: EngineContext, http: ComfyHttp, retrying: Retrying): Promise<Record<string, unknown>> {
    const safeJob = job.id.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64);
    // One name per job and input: a restarted run overwrites its own upload, never another job's.
    const uploaded = await handOverMedia(urlInputsOf(model.schema, job.request), (url, field) => ctx.loadInput(url, field), ({ index, bytes, contentType, ext }) =>
      retrying(() => http.upload(bytes, `mediagen-${safeJob}-${index + 1}.${ext}`, contentType)),
    );
    const prompt = structuredClone(model.workflow.prompt) as Record<string, { class_type: string; inputs: Record<string, unknown> }>;
    const swap = (v: unknown): unknown => (typeof v === 'string' && uploaded.has(v) ? uploaded.get(v) : Array.isArray(v) ? v.map(swap) : v);
    for (const [field, targets] of Object.entries(model.workflow.inputs)) {
      const value = job.request[field];
      if (value === undefined) continue;
      for (const t of targets) prompt[t.node]!.inputs[t.input] = swap(structuredClone(value));
    }
    return prompt;
  }

  /**
   * `POST /prompt {prompt, client_id, prompt_id}`. The answer's `prompt_id` is the one to follow
   * (ComfyUI before v0.3.45 mints its own: stored at once); a 400 is a refusal. No version refuses
   * a duplicate id (v0.3.64 queues it twice), so after a failed attempt the prompt is looked for
   * before posting again.
   */
  async #queue(ctx: EngineContext, http: ComfyHttp, retrying: Retrying, prompt: Record<string, unknown>, ours: string, clientId: string): Promise<string> {
    let attempt = 0;
    return retrying(async () => {
      if (attempt++ > 0) {
        const found = await findPrompt(http, ours, clientId, true);
        if (found !== undefined) {
          await this.#save(ctx, found === ours ? { promptId: found, clientId, kept: true } : { promptId: found, clientId, minted: true });
          return found;
        }
      }
      const answer = await http.json('POST', '/prompt', { prompt, client_id: clientId, prompt_id: ours });
      if (answer.status === 400) throw promptRejection(answer.body);
      const id = isPlainObject(answer.body) ? answer.body.prompt_id : undefined;
      if (answer.status !== 200 || typeof id !== 'string' || id === '' || id.length > 200) throw new UpstreamError('malformed', `ComfyUI answered ${answer.status} to POST /prompt without a prompt id`);
      await this.#save(ctx, id === ours ? { promptId: id, clientId, kept: true } : { promptId: id, clientId, minted: true });
      return id;
    });
  }

  async #save(ctx: EngineContext, state: ComfyState): Promise<void> {
    await ctx.upstream.save({ engine: this.name, id: state.promptId, state: { ...state } });
  }

  /**
   * A cancelled or timed-out job leaves ComfyUI too, without reading the queue first (a queue of
   * web-UI prompts can be tens of MiB): the prompt is deleted from the queue (a no-op once it
   * runs), then interrupted by id. ComfyUI honours `/interrupt {prompt_id}` since v0.3.57; an older
   * one interrupts whatever runs, so there only when the socket saw ours start and not end, or,
   * without that, when the (streamed) `/queue` shows ours running. A lost lease or a shutdown
   * leaves it for the next run. The same when the engine gives up on a prompt ComfyUI may still
   * hold (upstream-cancel.ts).
   */
  async #cancel(promptId: string, follow: ComfyFollow, reason: unknown): Promise<void> {
    const { settings, clock, log } = this.#deps;
    await cancelUpstream({
      cancel: async (signal) => {
        const http = new ComfyHttp(settings.baseUrl, settings.requestTimeoutMs, signal);
        await http.json('POST', '/queue', { delete: [promptId] });
        let interrupt = await honoursTargetedInterrupt(http);
        if (!interrupt) {
          const seen = follow.seen(promptId);
          interrupt = seen === 'running' || (seen === 'unknown' && (await readQueue(http)).running.some((r) => r.id === promptId));
        }
        if (interrupt) await http.json('POST', '/interrupt', { prompt_id: promptId });
      },
      clock,
      baseMs: settings.pollIntervalMs,
      ...(log ? { log } : {}),
      label: { engine: this.name },
      why: reason instanceof RunStopped ? reason.why : 'gave-up',
    });
  }
}

/** A call retried as the run's UpstreamRetry follows it. */
type Retrying = <T>(call: () => Promise<T>) => Promise<T>;
