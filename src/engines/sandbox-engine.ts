import { SANDBOX_DWELL_MS, sandboxMarkersOf } from '../domain/sandbox-markers.js';
import type { SandboxFailCode, SandboxMarkers } from '../domain/sandbox-markers.js';
import type { Clock } from '../lib/clock.js';
import { describeFault } from '../lib/infra-fault.js';
import { UPSTREAM_MESSAGES } from './upstream/upstream-error.js';
import { EngineError } from './engine.js';
import type { Engine, EngineContext, EngineJob, EngineStage, OutputFile } from './engine.js';
import { DEFAULT_MEDIA_LIMITS, count, tooLarge } from './media/media-limits.js';

/**
 * The worker's engine in sandbox mode (`--sandbox`, docs/sandbox.md), around the one it would use
 * otherwise. Every status a run passes through lasts at least `dwellMs` (the waits go through the
 * clock): `scheduled` before the inner engine starts, and each stage the engine reports before the
 * engine goes on. A request whose `prompt` ends with sandbox markers is acted on here:
 * `[mediagen:fail=<code>]` fails the run with that code and a message a real failure of that code
 * gives, without running the inner engine; `[mediagen:timeout]` waits in `sampling` until the run's
 * own timeout stops it (the run policy gives such a job a short timeout, app/sandbox-wiring.ts);
 * `[mediagen:delay=<ms>]` adds that long to `sampling`. The inner engine renders the prompt
 * without its markers; the stored request keeps them.
 */
export class SandboxEngine implements Engine {
  readonly name: string;
  readonly #inner: Engine;
  readonly #clock: Clock;
  readonly #dwellMs: number;

  constructor(inner: Engine, clock: Clock, opts: { dwellMs?: number } = {}) {
    this.#inner = inner;
    this.#clock = clock;
    this.#dwellMs = opts.dwellMs ?? SANDBOX_DWELL_MS;
    this.name = inner.name;
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const marked = sandboxMarkersOf(job.request);
    const markers: SandboxMarkers = marked?.markers ?? {};
    const wait = (ms: number) => this.#clock.sleep(ms, ctx.signal);
    const stage = async (s: EngineStage, preview?: OutputFile) => {
      await ctx.stage(s, preview);
      await wait(this.#dwellMs);
      if (s === 'sampling' && markers.delayMs) await wait(markers.delayMs);
    };
    // `scheduled`: the run was claimed just now.
    await wait(this.#dwellMs);
    if (markers.fail && BEFORE_PROCESSING.has(markers.fail)) {
      // An input fails before `processing`, as a real one does; the delay is spent here instead.
      if (markers.delayMs) await wait(markers.delayMs);
      throw sandboxFailure(markers.fail, job.request);
    }
    if (markers.fail || markers.timeout) {
      await stage('processing');
      await stage('sampling');
      if (markers.fail) throw sandboxFailure(markers.fail, job.request);
      // Only the run's own timeout (or a cancel) ends this.
      await untilAborted(ctx.signal);
    }
    const request = marked ? { ...job.request, prompt: marked.prompt } : job.request;
    return this.#inner.run({ ...job, request }, { ...ctx, stage });
  }
}

/** Codes a real run meets while it fetches and checks inputs, before `processing`. */
const BEFORE_PROCESSING: ReadonlySet<SandboxFailCode> = new Set(['input_fetch_failed', 'input_invalid', 'input_too_large']);

/**
 * The failure `[mediagen:fail=<code>]` asks for, worded as a real failure of that code is: the
 * runner's own sentences for `worker_lost` and `server_unavailable` (a test checks they match
 * src/services/jobs/job-runs.ts), the local engine's for the input codes, naming the request's first
 * URL field (else `image_url`). `engine_failed` shows the fixed client sentence whatever this says.
 */
export function sandboxFailure(code: SandboxFailCode, request: Readonly<Record<string, unknown>>): EngineError {
  const detail = { detail: `sandbox: the prompt asked for [mediagen:fail=${code}]` };
  const [field, url] = firstUrlField(request);
  switch (code) {
    case 'input_fetch_failed':
      return new EngineError(code, `${field}: HTTP 404 from ${hostOf(url)}`, detail);
    case 'input_invalid':
      return new EngineError(code, `${field} is not a usable image: it cannot be decoded`, detail);
    case 'input_too_large':
      return tooLarge(field, `is 10000 x 10000 pixels; at most ${count(DEFAULT_MEDIA_LIMITS.imagePixels)} pixels are accepted`, detail.detail);
    case 'engine_failed':
      return new EngineError(code, 'the engine failed unexpectedly', detail);
    case 'worker_lost':
      return new EngineError(code, "the job's worker stopped 3 times; giving up", detail);
    case 'server_unavailable':
      return new EngineError(code, `the server could not run the job because ${describeFault('disk_full')}; you were not billed, submit it again later`, detail);
    case 'upstream_rejected':
      return new EngineError(code, UPSTREAM_MESSAGES.rejected('422: the input is not valid for this model'), detail);
    case 'upstream_failed':
      return new EngineError(code, UPSTREAM_MESSAGES.failed('the model raised an error'), detail);
    case 'upstream_unavailable':
      return new EngineError(code, UPSTREAM_MESSAGES.unavailable('503: service unavailable'), detail);
    case 'upstream_malformed':
      return new EngineError(code, UPSTREAM_MESSAGES.malformed('its answer names no output file'), detail);
  }
}

function firstUrlField(request: Readonly<Record<string, unknown>>): [string, string | undefined] {
  for (const [key, value] of Object.entries(request)) {
    if (typeof value === 'string' && /^(https?:|data:)/i.test(value)) return [key, value];
  }
  return ['image_url', undefined];
}

function hostOf(url: string | undefined): string {
  try {
    const host = url === undefined ? '' : new URL(url).host;
    return host || 'example.com';
  } catch {
    return 'example.com';
  }
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
