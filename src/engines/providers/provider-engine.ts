import type { Dispatcher } from 'undici';
import type { Clock } from '../../lib/clock.js';
import { providerType } from '../../config/provider-types.js';
import type { Log } from '../../lib/log.js';
import { urlInputsOf } from '../../models/private-urls.js';
import { backoffMs } from '../../lib/backoff.js';
import { EngineError, RunStopped } from '../engine.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../engine.js';
import type { ProviderRoute } from './provider-bindings.js';
import { createProviderHttp } from './provider-http.js';
import type { ProviderCallOutcome } from './provider-http.js';
import { syncHandleId } from './provider-port.js';
import type { AdapterFactory, ProviderAdapter, ProviderSettings, ProviderType, UpstreamHandle, UpstreamStatus } from './provider-port.js';
import { cancelUpstream, cancelsUpstream } from '../upstream/upstream-cancel.js';
import { UpstreamError, upstreamJobError } from '../upstream/upstream-error.js';
import { upstreamMediaInput } from '../upstream/upstream-media.js';
import { storeUpstreamOutputs } from '../upstream/upstream-outputs.js';
import { UpstreamRetry } from '../upstream/upstream-retry.js';
import { fillTemplate, readOutputPaths } from '../upstream/upstream-template.js';
import type { UpstreamNudges } from './upstream-nudges.js';

/** The longest wait between two status polls. */
export const POLL_MAX_MS = 10_000;
/** The largest list of output URLs kept with a synchronous call's state (JSON characters). */
const KEPT_MAX_CHARS = 8 * 1024;

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
  /** The provider's last status; `submitting` while a synchronous call is under way. */
  readonly status: string;
  /** The status as mapped (provider-kind.ts reads it for a job's details: whether the provider's job ended). */
  readonly phase?: UpstreamStatus['state'];
  readonly usage?: Readonly<Record<string, number | string>>;
  /** A synchronous call's output URLs, so a run cut off before keeping the files takes them without calling again. */
  readonly kept?: readonly string[];
}

/**
 * Runs a provider-bound model's jobs at its provider (docs/providers.md): builds the input from the
 * template, hands media over, submits once (the provider's id is stored before anything else, and
 * a later run resumes it), follows the job by polling (woken early by a verified webhook), maps its
 * statuses onto ours, and takes its files into the output store. What is retried, and when the job
 * is cancelled at the provider, are the money rules of upstream-retry.ts and upstream-cancel.ts.
 */
export class ProviderEngine implements BindableEngine {
  readonly name: string;
  readonly #deps: ProviderEngineDeps;
  readonly #trusted: ReadonlySet<string>;
  readonly #label: Readonly<Record<string, string>>;

  constructor(deps: ProviderEngineDeps) {
    this.#deps = deps;
    this.name = `provider:${deps.provider.name}`;
    this.#trusted = new Set([new URL(deps.provider.baseUrl).origin]);
    this.#label = { provider: deps.provider.name, type: deps.provider.type };
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
    const { clock, provider, log } = this.#deps;
    const retry = new UpstreamRetry({
      signal: ctx.signal,
      deadlineMs: ctx.deadlineMs,
      clock,
      baseMs: provider.pollIntervalMs,
      submitAttempts: provider.maxAttempts,
      // Whether a submission may be sent again is the type's fact (config/provider-types.ts).
      deduplicates: providerType(provider.type).deduplicates,
      fallsBack: ctx.canFallBack === true,
      ...(log ? { log } : {}),
      label: this.#label,
    });
    // The provider's job while it holds it unended: what a run that gives up must cancel there.
    let held: UpstreamHandle | undefined;
    try {
      const previous = await ctx.upstream.load();
      const resumed = previous?.engine === this.name ? (previous.state as unknown as StoredState) : undefined;
      let values: readonly string[];
      if (resumed?.handle?.id && adapter.synchronous && resumed.kept) {
        // The call was answered and its files' URLs kept: take them; calling again would be paid again.
        await ctx.stage('processing');
        await ctx.stage('sampling');
        values = resumed.kept;
      } else {
        let handle: UpstreamHandle;
        let status: UpstreamStatus;
        if (resumed?.handle?.id && !adapter.synchronous) {
          // A run before this one submitted the job: follow it there, never submit it twice.
          handle = held = resumed.handle;
          await ctx.stage('processing');
          status = await retry.follow(() => adapter.status(handle));
        } else {
          if (resumed?.handle?.id) {
            // A synchronous call has no status to ask: cut off by a restart, it is made again (docs/providers.md).
            log?.warn({ ...this.#label, was: resumed.status }, 'a synchronous provider call was cut off by a restart before its outputs were kept; calling it again, which the provider bills again');
          }
          ({ handle, status } = await this.#submit(job, model, adapter, retry, ctx));
          if (!adapter.synchronous) held = handle;
        }
        // A synchronous call staged `sampling` before it; a resumed one starts again at `processing`.
        status = await this.#follow(ctx, adapter, retry, handle, status, adapter.synchronous);
        held = undefined;
        if (status.state === 'failed') throw new UpstreamError('failed', status.message);
        if (status.state === 'cancelled') throw new UpstreamError('failed', 'the provider cancelled the job');
        if (status.state !== 'succeeded') throw new EngineError('engine_failed', `unexpected provider state ${status.state}`);
        values = readOutputPaths(status.output, model.route.upstream.outputs ?? adapter.defaultOutputs);
        if (adapter.synchronous) await this.#keep(ctx, handle, status, values);
      }
      return await storeUpstreamOutputs(values, ctx.outDir, model.outputTypes, {
        guarded: this.#deps.guarded,
        trustedOrigins: this.#trusted,
        maxBytes: this.#deps.outputMaxBytes,
        timeoutMs: provider.requestTimeoutMs,
        signal: ctx.signal,
        clock,
        download: (call) => retry.follow(call),
      });
    } catch (err) {
      const ended = ctx.signal.aborted ? ctx.signal.reason : err;
      if (held && cancelsUpstream(ended)) await this.#cancel(held, ended instanceof RunStopped ? ended.why : 'gave-up');
      if (err instanceof UpstreamError && (err.status === 401 || err.status === 403)) {
        // The operator's key, not the client's request: worth a warning naming the provider (never the key).
        log?.warn({ ...this.#label, status: err.status }, 'the provider refused our key; check its api_key_env');
      }
      throw err instanceof UpstreamError ? upstreamJobError(err) : err;
    }
  }

  /** Builds the input and hands the job over (the submission's money rules: upstream-retry.ts). */
  async #submit(job: EngineJob, model: ProviderModel, adapter: ProviderAdapter, retry: UpstreamRetry, ctx: EngineContext): Promise<{ handle: UpstreamHandle; status: UpstreamStatus }> {
    const filled = fillTemplate(model.route.upstream.input, job.request);
    const upload = adapter.upload?.bind(adapter);
    const input = await upstreamMediaInput(filled, urlInputsOf(model.schema, job.request), {
      load: (url, field) => ctx.loadInput(url, field),
      inlineMaxBytes: this.#deps.provider.inlineMaxBytes,
      // A repeated upload costs a stored file, never a generation: retried as a follow.
      upload: upload && ((bytes, type, name) => retry.prepare(() => upload(bytes, type, name))),
    }).catch((err: unknown) => {
      throw retry.refusal(err);
    });
    await ctx.stage('processing');
    if (adapter.synchronous) {
      // A synchronous provider generates within the call: it has started sampling. The mark tells
      // a run after a restart that a call was made (and may be billed) whose answer is lost.
      await ctx.stage('sampling');
      await this.#save(ctx, { id: syncHandleId(job.id) }, { state: 'running', raw: 'submitting' });
    }
    const submitted = await retry
      .submit(() =>
        adapter.submit({
          model: model.route.upstream.model ?? model.endpoint,
          input,
          jobId: job.id,
          ...(this.#deps.webhookUrl && adapter.verifyWebhook ? { webhookUrl: this.#deps.webhookUrl } : {}),
        }),
      )
      .catch((err: unknown) => {
        throw retry.refusal(err);
      });
    await this.#save(ctx, submitted.handle, submitted.status);
    return submitted;
  }


  /** Polls until the provider's job ends, moving ours to `sampling` and reporting progress on the way. */
  async #follow(ctx: EngineContext, adapter: ProviderAdapter, retry: UpstreamRetry, handle: UpstreamHandle, first: UpstreamStatus, sampled: boolean): Promise<UpstreamStatus> {
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
      const wait = backoffMs(polls, provider.pollIntervalMs, POLL_MAX_MS);
      await (nudges ? nudges.sleep(provider.name, handle.id, wait, ctx.signal, clock) : clock.sleep(wait, ctx.signal));
      status = await retry.follow(() => adapter.status(handle));
    }
  }

  async #save(ctx: EngineContext, handle: UpstreamHandle, status: UpstreamStatus, kept?: readonly string[]): Promise<void> {
    const usage = status.state === 'succeeded' || status.state === 'failed' ? status.usage : undefined;
    const state: StoredState = { handle, status: status.raw, phase: status.state, ...(usage ? { usage } : {}), ...(kept ? { kept } : {}) };
    await ctx.upstream.save({ engine: this.name, id: handle.id, state: state as unknown as Record<string, unknown> });
  }

  /** Keeps a synchronous answer's output URLs with its state (base64 answers are too large to keep). */
  async #keep(ctx: EngineContext, handle: UpstreamHandle, status: UpstreamStatus, values: readonly string[]): Promise<void> {
    const urls = values.length > 0 && values.every((v) => /^https?:\/\//i.test(v));
    if (urls && JSON.stringify(values).length <= KEPT_MAX_CHARS) await this.#save(ctx, handle, status, values);
  }

  /** Cancels the provider's job (upstream-cancel.ts): the run was cancelled or timed out, or the engine gave up on it. */
  async #cancel(handle: UpstreamHandle, why: string): Promise<void> {
    const { clock, provider, log } = this.#deps;
    await cancelUpstream({
      cancel: (signal) => this.adapterFor(signal).cancel(handle),
      clock,
      baseMs: provider.pollIntervalMs,
      ...(log ? { log } : {}),
      label: this.#label,
      why,
    });
  }
}
