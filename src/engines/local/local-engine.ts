import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import { EngineError } from '../engine.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../engine.js';
import { locateFfmpeg } from '../media/ffmpeg.js';
import { locateFfprobe } from '../media/ffprobe.js';
import { DEFAULT_MEDIA_LIMITS } from '../media/media-limits.js';
import type { MediaLimits } from '../media/media-limits.js';
import { renderEnhance } from './renderers/enhance-renderer.js';
import { renderModelA2 } from './renderers/model-a2-renderer.js';
import { renderModelB1 } from './renderers/model-b1-renderer.js';
import { renderModelCEdit } from './renderers/model-c-edit-renderer.js';
import { renderModelL1 } from './renderers/model-l1-renderer.js';
import { renderModelK1 } from './renderers/model-k1-renderer.js';
import { renderStyleTraining } from './renderers/style-train-renderer.js';
import { renderVideoUpscale } from './renderers/video-upscale-renderer.js';
import type { ModelRenderer, RenderEnv } from './render-types.js';
import { renderModelDFast, renderModelE1, renderModelF } from './renderers/video-models-renderer.js';

export interface LocalEngineOptions {
  readonly clock: Clock;
  /**
   * Simulated provider time, spread in three equal waits over scheduled → processing → sampling →
   * intermediate-complete; rendering time comes on top. The procedural stand-ins only: the
   * enhancers (REAL_WORK) take the time their work takes.
   */
  readonly latencyMs: number;
  /** An ffmpeg binary to use instead of the one found on PATH or shipped by npm. */
  readonly ffmpegPath?: string;
  /** What inputs may claim and cost to decode; unset limits keep DEFAULT_MEDIA_LIMITS. */
  readonly limits?: Partial<MediaLimits>;
}

const RENDERERS: ReadonlyMap<string, ModelRenderer> = new Map([
  ['image/vendor-a/model-a-2/medium', renderModelA2],
  ['image/vendor-a/model-a-2/large', renderModelA2],
  ['image/vendor-a/model-a-2/medium-turbo', renderModelA2],
  ['image/vendor-b/model-b-1', renderModelB1],
  ['video/vendor-c/model-c-edit', renderModelCEdit],
  ['video/vendor-d/model-d-fast', renderModelDFast],
  ['video/vendor-e/model-e-1', renderModelE1],
  ['video/vendor-f/model-f', renderModelF],
  ['audio/vendor-l/model-l-1', renderModelL1],
  ['enhance/vendor-j/standard-enhance', renderEnhance],
  ['enhance/vendor-j/generative-enhance', renderEnhance],
  ['3d/vendor-k/model-k-1', renderModelK1],
  ['enhance/vendor-j/video-upscale', renderVideoUpscale],
  ['loraTraining', renderStyleTraining],
]);

/**
 * Models whose render is the real work on the client's input (the ESRGAN network, lanczos3,
 * ffmpeg's scaler), not a stand-in drawn for a vendor's model: they are not delayed by `latencyMs`,
 * which imitates a provider's time for the stand-ins.
 */
const REAL_WORK: ReadonlySet<string> = new Set(['enhance/vendor-j/standard-enhance', 'enhance/vendor-j/generative-enhance', 'enhance/vendor-j/video-upscale']);

/** Scratch files live beside the outputs (same disk) in a directory no output name can match. */
const WORK_DIR_PREFIX = '.work-';

/**
 * The built-in engine: real, deterministic media made on this machine with sharp and ffmpeg,
 * standing in for the vendors' models. docs/engine.md describes what each model produces.
 */
export class LocalEngine implements BindableEngine {
  /** The id model modules bind to (`engine: 'local'`). */
  readonly name = 'local';
  readonly #clock: Clock;
  readonly #waits: readonly [number, number, number];
  readonly #ffmpegPath: string | undefined;
  readonly #limits: MediaLimits;

  constructor(opts: LocalEngineOptions) {
    this.#clock = opts.clock;
    const total = Math.max(0, Math.round(opts.latencyMs));
    const third = Math.floor(total / 3);
    this.#waits = [third, third, total - 2 * third];
    this.#ffmpegPath = opts.ffmpegPath;
    this.#limits = Object.freeze({ ...DEFAULT_MEDIA_LIMITS, ...opts.limits });
  }

  /** The models it has a renderer for. */
  canRun(model: string): boolean {
    return RENDERERS.has(model);
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const renderer = RENDERERS.get(job.model);
    if (!renderer) throw new EngineError('engine_failed', `the local engine has no model ${job.model}`);
    const { signal } = ctx;
    const [toProcessing, toSampling, toPreview] = REAL_WORK.has(job.model) ? [0, 0, 0] : this.#waits;

    await this.#clock.sleep(toProcessing, signal);
    signal.throwIfAborted();
    const workDir = await mkdtemp(join(ctx.outDir, WORK_DIR_PREFIX));
    try {
      const env: RenderEnv = {
        ctx,
        workDir,
        ffmpeg: () => this.#tool('ffmpeg', locateFfmpeg(this.#ffmpegPath)),
        ffprobe: () => this.#tool('ffprobe', locateFfprobe()),
        limits: this.#limits,
      };
      const prepared = await guard(signal, 'reading the inputs', () => renderer(job.model, job.request, env));
      await ctx.stage('processing');
      await this.#clock.sleep(toSampling, signal);
      signal.throwIfAborted();
      await ctx.stage('sampling');
      const rendered = await guard(signal, 'rendering', () => prepared.render());
      await this.#clock.sleep(toPreview, signal);
      signal.throwIfAborted();
      await ctx.stage('intermediate-complete', rendered.preview);
      return [...rendered.outputs];
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async #tool(name: string, located: Promise<string>): Promise<string> {
    try {
      return await located;
    } catch (err) {
      throw new EngineError('engine_failed', `the local engine cannot run ${name}`, { detail: (err as Error).message });
    }
  }
}

/**
 * Aborts surface as the signal's reason, EngineErrors as themselves (including the context's own
 * input errors); anything else is the engine's own failure, told to the client in general terms:
 * its message (ffmpeg's stderr, a path, an errno) goes only to `detail`, for the server log.
 */
async function guard<T>(signal: AbortSignal, doing: string, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work();
    signal.throwIfAborted();
    return result;
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof EngineError) throw err;
    const detail = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
    throw new EngineError('engine_failed', `the local engine failed while ${doing}`, { detail, cause: err });
  }
}
