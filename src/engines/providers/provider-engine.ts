import type { Dispatcher } from 'undici';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { urlInputsOf } from '../../models/private-urls.js';
import { EngineError, RunStopped } from '../engine.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../engine.js';
import type { ProviderRoute } from './provider-bindings.js';
import { createProviderHttp } from './provider-http.js';
import type { ProviderCallOutcome } from './provider-http.js';
import { providerMediaInput, storeUpstreamOutputs } from './provider-media.js';
import type { AdapterFactory, ProviderAdapter, ProviderSettings, ProviderType, UpstreamHandle, UpstreamStatus } from './provider-port.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { upstreamJobError } from '../upstream/upstream-error.js';
import { fillTemplate, readOutputPaths } from '../upstream/upstream-template.js';
import type { UpstreamNudges } from './upstream-nudges.js';

/** The longest wait between two status polls. */
export const POLL_MAX_MS = 10_000;
/** How long a cancel sent to the provider after the run stopped may take. */
const CANCEL_TIMEOUT_MS = 10_000;

/** What the engine counts for /metrics: each call to a provider. */
export interface ProviderMeter {
  providerCall(provider: string, type: ProviderType, call: ProviderCallOutcome): void;
}

export interface ProviderEngineDeps {
  readonly provider: ProviderSettings;
  readonly adapter: AdapterFactory;
  /** Each model this provider runs: its mapping, request schema (which fields are media) and output types. */
  readonly models: ReadonlyMap<string, ProviderModel>;
  readonly clock: Clock;
  /** Guarded by the address policy (--allow-private-urls): output URLs on any host but the provider's. */
  readonly guarded: Dispatcher;
  /** The largest output file taken from the provider (`worker_output_max_bytes`). */
  readonly outputMaxBytes: number;
  /** Where the provider may call back (`<public_url>/providers/<name>/webhook`); absent: polling only. */
  readonly webhookUrl?: string;
  readonly nudges?: UpstreamNudges;
  readonly meter?: ProviderMeter;
  readonly log?: Log;
}

export interface ProviderModel {
  readonly route: ProviderRoute;
  /** The model's own endpoint here (`/generate/<path>`): what a `krea` upstream calls when `upstream.model` is not set. */
  readonly endpoint: string;
  readonly schema: object | undefined;
  readonly outputTypes: readonly string[];
}

/** What the engine keeps of a provider job with ours (jobs' `job_upstreams` row). */
interface StoredState {
  readonly handle: UpstreamHandle;
  readonly status: string;
  /** The status as mapped (provider-kind.ts reads it for a job's details: whether the provider's job ended). */
  readonly phase?: UpstreamStatus['state'];
  readonly usage?: Readonly<Record<string, number | string>>;
}

/**
 * Runs a provider-bound model's jobs at its provider (docs/providers.md): builds the input from the
 * template, hands media over, submits once (the provider's id is stored before anything else, and
 * a later run resumes it), follows the job by polling (woken early by a verified webhook), maps its
 * statuses onto ours, retries what is the provider's passing trouble up to the deadline, cancels it
 * there when ours is cancelled or times out, and takes its files into the output store.
 */
export class ProviderEngine implements BindableEngine {
  readonly name: string;
  readonly #deps: ProviderEngineDeps;
  readonly #trusted: ReadonlySet<string>;

  constructor(deps: ProviderEngineDeps) {
    this.#deps = deps;
    this.name = `provider:${deps.provider.name}`;
    this.#trusted = new Set([new URL(deps.provider.baseUrl).origin]);
  }

  canRun(model: string): boolean {
    return this.#deps.models.get(model)?.route.provider.name === this.#deps.provider.name;
  }

  /** Ends the connections to output hosts (the provider's own calls use fetch's global pool). */
  async close(): Promise<void> {
    await this.#deps.guarded.close();
  }

  /** The adapter of one run (or one webhook check): its HTTP is bound to `signal`. */
  adapterFor(signal?: AbortSignal): ProviderAdapter {
    const { provider, clock, meter } = this.#deps;
    const http = createProviderHttp({
      type: provider.type,
      baseUrl: provider.baseUrl,
      apiKey: provider.apiKey,
      timeoutMs: provider.requestTimeoutMs,
      ...(provider.storageUrl ? { trustedOrigins: [provider.storageUrl] } : {}),
      ...(signal ? { signal } : {}),
      clock,
      ...(meter ? { onCall: (call: ProviderCallOutcome) => meter.providerCall(provider.name, provider.type, call) } : {}),
    });
    return this.#deps.adapter(provider, http);
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const model = this.#deps.models.get(job.model);
    if (!model) throw new EngineError('engine_failed', `provider ${this.#deps.provider.name} does not run ${job.model}`);
    const adapter = this.adapterFor(ctx.signal);
    let handle: UpstreamHandle | undefined;
    try {
      const previous = await ctx.upstream.load();
      const resumed = previous?.engine === this.name ? (previous.state as unknown as StoredState) : undefined;
      let status: UpstreamStatus;
      if (resumed?.handle?.id) {
        // A run before this one submitted the job: follow it there, never submit it twice.
        handle = resumed.handle;
        await ctx.stage('processing');
        status = await this.#retrying(ctx, () => adapter.status(handle!));
      } else {
        const input = await this.#input(job, model, adapter, ctx);
        await ctx.stage('processing');
        // A synchronous provider generates within the call: it has started sampling.
        if (adapter.synchronous) await ctx.stage('sampling');
        const submitted = await this.#retrying(ctx, () =>
          adapter.submit({
            model: model.route.upstream.model ?? model.endpoint,
            input,
            jobId: job.id,
            ...(this.#deps.webhookUrl && adapter.verifyWebhook ? { webhookUrl: this.#deps.webhookUrl } : {}),
          }),
        );
        handle = submitted.handle;
        status = submitted.status;
        await this.#save(ctx, handle, status);
      }
      // A synchronous call staged `sampling` before it; a resumed one starts again at `processing`.
      status = await this.#follow(ctx, adapter, handle, status, adapter.synchronous && !resumed?.handle?.id);
      if (status.state === 'failed') throw upstreamJobError(new UpstreamError('failed', status.message));
      if (status.state === 'cancelled') throw upstreamJobError(new UpstreamError('failed', 'the provider cancelled the job'));
      if (status.state !== 'succeeded') throw new EngineError('engine_failed', `unexpected provider state ${status.state}`);
      const paths = model.route.upstream.outputs ?? adapter.defaultOutputs;
      return await storeUpstreamOutputs(readOutputPaths(status.output, paths), ctx.outDir, model.outputTypes, {
        guarded: this.#deps.guarded,
        trustedOrigins: this.#trusted,
        maxBytes: this.#deps.outputMaxBytes,
        timeoutMs: this.#deps.provider.requestTimeoutMs,
        signal: ctx.signal,
      }).catch((err: unknown) => {
        throw err instanceof UpstreamError ? upstreamJobError(err) : err;
      });
    } catch (err) {
      if (ctx.signal.aborted) await this.#cancelIfOurs(ctx.signal.reason, handle);
      throw err instanceof UpstreamError ? upstreamJobError(err) : err;
    }
  }

  /** The provider input: the template filled, media inputs in a form the provider reads. */
  async #input(job: EngineJob, model: ProviderModel, adapter: ProviderAdapter, ctx: EngineContext): Promise<Record<string, unknown>> {
    const filled = fillTemplate(model.route.upstream.input, job.request);
    const upload = adapter.upload?.bind(adapter);
    return providerMediaInput(filled, urlInputsOf(model.schema, job.request), {
      load: (url, field) => ctx.loadInput(url, field),
      inlineMaxBytes: this.#deps.provider.inlineMaxBytes,
      upload: upload && ((bytes, type, name) => this.#retrying(ctx, () => upload(bytes, type, name))),
    });
  }

  /** Polls until the provider's job ends, moving ours to `sampling` and reporting progress on the way. */
  async #follow(ctx: EngineContext, adapter: ProviderAdapter, handle: UpstreamHandle, first: UpstreamStatus, sampled: boolean): Promise<UpstreamStatus> {
    let status = first;
    let sampling = sampled;
    let saved = first.raw;
    const { clock, nudges, provider } = this.#deps;
    for (let polls = 1; ; polls++) {
      // A job done before we saw it run still passes `sampling`: the state machine completes only from there.
      if (status.state === 'running' || (status.state === 'succeeded' && !sampling)) {
        if (!sampling) {
          await ctx.stage('sampling');
          sampling = true;
        }
        if (status.state === 'running' && status.progress !== undefined) ctx.progress(status.progress);
      }
      if (status.state === 'succeeded' || status.state === 'failed' || status.state === 'cancelled') {
        await this.#save(ctx, handle, status);
        return status;
      }
      if (status.raw !== saved) {
        await this.#save(ctx, handle, status);
        saved = status.raw;
      }
      const wait = Math.min(POLL_MAX_MS, provider.pollIntervalMs * 2 ** Math.min(polls - 1, 10));
      await (nudges ? nudges.sleep(provider.name, handle.id, wait, ctx.signal, clock) : clock.sleep(wait, ctx.signal));
      status = await this.#retrying(ctx, () => adapter.status(handle));
    }
  }

  async #save(ctx: EngineContext, handle: UpstreamHandle, status: UpstreamStatus): Promise<void> {
    const usage = status.state === 'succeeded' || status.state === 'failed' ? status.usage : undefined;
    const state: StoredState = { handle, status: status.raw, phase: status.state, ...(usage ? { usage } : {}) };
    await ctx.upstream.save({ engine: this.name, id: handle.id, state: state as unknown as Record<string, unknown> });
  }

  /**
   * Runs `call`, retrying the provider's passing trouble (429, 5xx, timeouts, lost connections) with
   * backoff and its Retry-After, until `max_attempts` calls in a row failed or the next wait would
   * reach the job's deadline: then the job fails `upstream_unavailable`, not `timeout`.
   */
  async #retrying<T>(ctx: EngineContext, call: () => Promise<T>): Promise<T> {
    const { clock, provider, log } = this.#deps;
    for (let failures = 1; ; failures++) {
      try {
        return await call();
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (!(err instanceof UpstreamError) || err.kind !== 'unavailable') throw err;
        const backoff = Math.min(30_000, provider.pollIntervalMs * 2 ** (failures - 1));
        const wait = Math.max(backoff, err.retryAfterMs ?? 0);
        const last = failures >= provider.maxAttempts || clock.nowMs() + wait >= ctx.deadlineMs;
        // Names the provider, never its key or the provider's words (which may quote the input).
        log?.warn({ provider: provider.name, type: provider.type, status: err.status, failures, giveUp: last }, last ? 'provider keeps failing; giving up on the job' : 'provider call failed; retrying');
        if (last) throw err;
        await clock.sleep(wait, ctx.signal);
      }
    }
  }

  /** A cancelled or timed-out job is cancelled at the provider too; a lost lease or a shutdown leaves it for the next run. */
  async #cancelIfOurs(reason: unknown, handle: UpstreamHandle | undefined): Promise<void> {
    if (!handle || !(reason instanceof RunStopped) || (reason.why !== 'cancelled' && reason.why !== 'timeout')) return;
    try {
      await this.adapterFor(AbortSignal.timeout(CANCEL_TIMEOUT_MS)).cancel(handle);
    } catch (err) {
      this.#deps.log?.warn({ provider: this.#deps.provider.name, why: reason.why, err: { name: (err as Error).name, message: (err as Error).message } }, 'could not cancel the job at the provider');
    }
  }
}
