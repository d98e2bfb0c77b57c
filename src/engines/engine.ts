/**
 * The contract between the job runner and whatever makes the media: the built-in local engine
 * today, a remote GPU worker or a vendor proxy later. The runner owns statuses, leases, timeouts
 * and storage; an engine only turns one validated request into files, reporting its stages.
 */

/** One job as an engine sees it. */
export interface EngineJob {
  readonly id: string;
  /** The catalog model path, e.g. `image/vendor-a/model-a-2/medium`. */
  readonly model: string;
  /** The validated request body, defaults applied, aliases already renamed. */
  readonly request: Readonly<Record<string, unknown>>;
}

/** A file the engine wrote into its output directory. */
export interface OutputFile {
  /** A plain file name inside `outDir` (no directories), e.g. `output.png`. */
  readonly name: string;
  readonly contentType: string;
  /**
   * For outputs that are not all of one kind (a 3D model and its preview render): what this file
   * is. When any output has a role `model` or `preview`, the result lists `{type, url}` objects
   * (spec 2.2's second shape) instead of bare URLs. `style`: a style-training job's artifact
   * (JSON, opaque to the API), stored with the style the job creates and never served.
   */
  readonly role?: 'model' | 'preview' | 'style';
  /**
   * A node-app job's output name for this file: when any output has a key, the result's `urls` is
   * an object mapping each key to its URL (spec 2.2's node-app shape).
   */
  readonly key?: string;
  /**
   * A video's or a sound's duration as measured from the written file, in whole microseconds.
   * Given for the main output of a model priced per output second: the job is charged by it.
   */
  readonly durationUs?: number;
}

/**
 * Stages an engine reports, in this order. `processing`: every input is fetched and checked.
 * `sampling`: generation has started. `intermediate-complete`: a preview file exists.
 */
export type EngineStage = 'processing' | 'sampling' | 'intermediate-complete';

export interface EngineContext {
  /** Aborts when the job is cancelled, times out, loses its lease or the worker shuts down. */
  readonly signal: AbortSignal;
  /** An empty directory owned by this run; every output and preview is written here. */
  readonly outDir: string;
  /**
   * Loads an input the request names (`field` is its JSON path, for messages): a `data:` URI is
   * decoded, an http(s) URL fetched with the size cap, timeout and address guard. Failures throw
   * an EngineError whose code is `input_fetch_failed` or `input_invalid`.
   */
  loadInput(url: string, field: string): Promise<Buffer>;
  /**
   * Records that the run reached `stage`. With `intermediate-complete`, `preview` names a file
   * already in `outDir`. Rejects (with the signal's reason) if the job can no longer advance,
   * for instance because it was cancelled; the engine then stops.
   */
  stage(stage: EngineStage, preview?: OutputFile): Promise<void>;
  /**
   * The artifact of a trained style the request names (its `styles[].id`), as the training run
   * stored it. The style was checked visible to the job's workspace when the job was created.
   * Throws an EngineError `input_invalid` if it no longer exists.
   */
  loadStyle(id: string): Promise<StyleArtifact>;
  /**
   * When the job's timeout ends it (epoch ms): the run is then aborted. An engine that retries
   * a third party stops retrying before it, so such a job ends as the third party's fault.
   */
  readonly deadlineMs: number;
  /** Reports how far the work is, 0 to 1: shown as the job's progress with the next heartbeat. */
  progress(fraction: number): void;
  /**
   * The job's work held elsewhere (a provider's job, a ComfyUI prompt): `load` reads what an earlier
   * run of this job stored (undefined on a first run; read only when asked, so other engines cost no
   * query), and `save` stores it under the run's lease, rejecting with the run's stop reason when
   * the job is no longer this run's. An engine resumes only a state whose `engine` is its own name.
   */
  readonly upstream: {
    load(): Promise<UpstreamState | undefined>;
    save(state: UpstreamState): Promise<void>;
  };
  /** Routing's store-backed hooks (docs/routing.md), where the runner has a store: absent on a remote worker. Only the router uses them. */
  readonly route?: RouteHooks;
  /**
   * Set by the router when the job's chain has a next engine: an engine that cannot take the job
   * now (its upstream refuses connections, answers 429 or 503, its processes cannot start) says so
   * at once, with an EngineError `notAccepted`, rather than retry until the deadline.
   */
  readonly canFallBack?: boolean;
}

/** One step of a job's route through its model's chain, as its details show it (docs/routing.md). */
export interface RouteStep {
  readonly engine: string;
  /**
   * `ran`: the engine took the job (it then completed or failed it there); `refused`: it provably
   * did not accept it (unreachable, 429, a 5xx or timeout before it stored an id); `skipped`: its
   * circuit was open; `busy`: at its max_in_flight past spill_after_ms; `spilled`: a remote pool's
   * job taken by this server's engines after spill_after_ms.
   */
  readonly outcome: 'ran' | 'refused' | 'skipped' | 'busy' | 'spilled';
  /** Why, for `refused`: the upstream's words, cleaned as its job errors are. */
  readonly reason?: string;
  /** When (ISO 8601). */
  readonly at: string;
}

export interface RouteHooks {
  /** Since when the job has waited for an engine (epoch ms): its creation. */
  readonly waitingSinceMs: number;
  /** Takes one of `engine`'s `max` places for this run, across the cluster; false when all are taken. */
  acquire(engine: string, max: number): Promise<boolean>;
  /** Frees the run's place. */
  release(): Promise<void>;
  /** Stores the route so far and the engine that took the job (null: none yet); rejects with the run's stop reason when the job is no longer the run's. */
  record(trail: readonly RouteStep[], engine: string | null): Promise<void>;
}

/**
 * Work an engine holds elsewhere for a job, as stored with it (`job_upstreams`) and carried by the
 * worker protocol: which engine (its id, `provider:replicate`, `comfyui:gpu`), the work's id there,
 * and the engine's own small JSON, which only that engine's kind reads (engine-kind.ts, `describe`).
 */
export interface UpstreamState {
  readonly engine: string;
  readonly id: string;
  readonly state: Readonly<Record<string, unknown>>;
}

/**
 * What a job's details show of its upstream state (GET /jobs/{id}/details), as the engine's kind
 * reads its own state: the upstream's status as it spelt it, what it reported using, and whether
 * that status is a final one there (the work ended: succeeded, failed, cancelled).
 */
export interface UpstreamDescription {
  readonly status: string | null;
  readonly usage: Readonly<Record<string, number | string>> | null;
  readonly final: boolean;
}

/**
 * A failure of this attempt that another may not meet: a model process that died mid-job, a
 * process that says the job may be retried. The job goes back to the queue while it has attempts
 * left (the run policy's `maxAttempts`), then fails with `engine_failed`; it is not billed either way.
 */
export class RetryableEngineError extends Error {
  readonly retryable = true;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RetryableEngineError';
  }
}

/**
 * Why a run was stopped from outside the engine: the signal's reason, the same from the in-process
 * runner and the remote worker (worker/run-harness.ts). `cancelled`: the job was cancelled or
 * deleted; `timeout`: its deadline passed (the harness stops every run there); `lost`: another run
 * has it, or someone else ended it; `shutdown`: this worker is stopping. An engine that holds work
 * elsewhere (a provider job, a ComfyUI prompt) cancels it there on `cancelled` and `timeout`, and
 * leaves it running on `lost` and `shutdown`, when the job's next run resumes it.
 */
export class RunStopped extends Error {
  constructor(readonly why: 'cancelled' | 'lost' | 'timeout' | 'shutdown') {
    super(`run stopped: ${why}`);
    this.name = 'RunStopped';
  }
}

/** A trained style as an engine stores and reads it: opaque JSON to everything but engines. */
export type StyleArtifact = Readonly<Record<string, unknown>>;

/** The largest style artifact a training run may report, in bytes of JSON: it is stored in the database with its style. */
export const MAX_STYLE_ARTIFACT_BYTES = 64 * 1024;

export interface Engine {
  readonly name: string;
  /** Makes the job's outputs in `ctx.outDir` and returns them, the main output first. */
  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]>;
  /**
   * The start-up check (docs/engines.md, "Life cycle"): what the engine can learn cheaply of
   * whether it will work, run once when the process's engines are built. It resolves with a
   * warning for the log when what it needs is not there now (a server not answering: an outage
   * may pass, and its jobs wait for it), and rejects (a ConfigError) only for what no retry mends.
   * Absent: nothing worth checking.
   */
  check?(signal: AbortSignal): Promise<string | undefined>;
  /** Stops what the engine keeps running (processes, connections); the engine set calls it once, at shutdown. */
  close?(): Promise<void>;
}

/**
 * An engine models can be bound to (src/engines/router.ts): its `name` is the id a model module or
 * the config file's `model_engines` names it by, and it says which models it can run, so a server
 * whose models have no engine able to run them refuses to start instead of failing their jobs.
 */
export interface BindableEngine extends Engine {
  canRun(model: string): boolean;
}

/**
 * Codes a job can fail with (`error.code` of the job, spec 2.3). One list, documented in
 * docs/errors.md; a test checks both agree.
 */
export const JOB_ERROR_CODES = Object.freeze({
  input_fetch_failed: 'an input URL could not be fetched (refused address, HTTP error, timeout, too large)',
  input_invalid: 'an input was fetched but is not a usable image or video, or a data: URI is malformed',
  input_too_large: 'an input claims more than the limits allow (duration, frames, pixels, streams) or took longer than its decode budget',
  timeout: "the job ran longer than its model's timeout",
  worker_lost: 'the job was reclaimed after its worker stopped too many times',
  engine_failed: 'the engine failed for a reason of its own',
  server_unavailable: "the server's storage or database kept failing while it ran the job (disk full, too many open files, read-only, database lost); not billed, submit again later",
  upstream_rejected: 'the hosted provider the model runs on refused the request (its message says why)',
  upstream_failed: 'the hosted provider took the job and failed it (its message says why)',
  upstream_unavailable: 'the hosted provider could not be reached or kept answering with errors until the job ran out of time or attempts; not billed, submit again later',
  upstream_malformed: "the hosted provider's answer could not be used: not as documented, too large, not the model's media type, or outputs at a refused address",
} as const);

export type JobErrorCode = keyof typeof JOB_ERROR_CODES;

export interface EngineErrorOptions {
  /**
   * The full diagnostic for the server log (decoder output, paths, the underlying error): never
   * shown to the client. The runner logs it with the job id.
   */
  readonly detail?: string;
  /** The error behind this one, kept so the runner can tell a full disk from a bad input. */
  readonly cause?: unknown;
  /**
   * The engine provably did not take the job: nothing of it reached a place that could run or
   * bill it (docs/routing.md, "Fallback"). Only the engine knows, so only it says so; the router
   * then hands the job to the next engine of its chain.
   */
  readonly notAccepted?: boolean;
}

/**
 * A failure that ends the job with `error: {code, message}`. The message is shown to the client,
 * so it carries no server paths, decoder output, addresses or stack traces; those go in `detail`.
 */
export class EngineError extends Error {
  readonly code: JobErrorCode;
  readonly detail: string | undefined;
  readonly notAccepted: boolean;
  constructor(code: JobErrorCode, message: string, options: EngineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngineError';
    this.code = code;
    this.detail = options.detail;
    this.notAccepted = options.notAccepted ?? false;
  }
}
