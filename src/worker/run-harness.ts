import type { Engine, EngineContext, EngineJob, EngineStage, OutputFile, RouteStep, StyleArtifact, UpstreamState } from '../engines/engine.js';
import { RetryableEngineError, RunStopped } from '../engines/engine.js';
import { StageForwarder } from '../engines/node-app-stages.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import type { JobError } from '../services/jobs/job-end.js';
import type { Held, Lost, LostWhy } from '../services/jobs/run-outcomes.js';
import { clientJobError, errorDetail } from './job-errors.js';

/**
 * The one run harness of both runners (the in-process worker's run-job.ts and the remote worker's
 * remote/run-remote-job.ts): the engine's context, the heartbeat, the job's deadline, stages
 * forwarded once and in order, what stops a run (always a `RunStopped`, so an engine that holds
 * work elsewhere cancels it there from either runner) and how a run that did not complete is
 * classed. Where the run is written differs, and is the sink: the job and output stores
 * in-process, the worker protocol remotely.
 */

/** The job's completion was written. */
export interface Completed {
  readonly kind: 'completed';
}
export const COMPLETED: Completed = Object.freeze({ kind: 'completed' });

/**
 * How a run that did not complete ends, for its sink to write. `stopped`: this side stopped it
 * (the worker is shutting down; the job's deadline passed). `lost`: the job is no longer the run's
 * (cancelled, deleted, reclaimed, ended by someone else): nothing is written but, when
 * `outputsGo`, the removal of its files. `fault`: the sink's own kind of trouble (a full disk, an
 * unreachable server), not the job's.
 */
export type RunEnd<F> =
  | { readonly kind: 'stopped'; readonly why: 'shutdown' | 'timeout' }
  | { readonly kind: 'lost'; readonly lost: Lost }
  | { readonly kind: 'retry'; readonly reason: RetryableEngineError }
  | { readonly kind: 'fault'; readonly reason: unknown; readonly fault: F }
  | { readonly kind: 'failed'; readonly reason: unknown; readonly error: JobError };

/** Where a run is written. Every move answers whether the job is still the run's. */
export interface RunSink<F> {
  /** When the job's timeout ends it (epoch ms); NaN: not known, no timer. */
  readonly deadlineMs: number;
  /** How long to wait before the next heartbeat. */
  beatInMs(): number;
  /** Renews the lease with the engine's last progress (0 to 1). */
  beat(progress: number | undefined): Promise<Held | Lost>;
  /** Hears of a loss from elsewhere (an in-process cancel signal); returns how to stop listening. */
  watch?(stop: (lost: Lost) => void): () => void;
  /** Makes the run's scratch directory (the engine's `outDir`); `signal` aborts when the run is stopped. */
  open(signal: AbortSignal): Promise<string>;
  loadInput(url: string, field: string, signal: AbortSignal): Promise<Buffer>;
  loadStyle(id: string): Promise<StyleArtifact>;
  loadUpstream(): Promise<UpstreamState | undefined>;
  saveUpstream(state: UpstreamState): Promise<Held | Lost>;
  /** Routing's store-backed hooks (EngineContext.route), where the sink has a store. */
  readonly route?: RouteSink;
  /** Writes one stage (the harness calls it once per stage, in order); a preview is stored before the status that shows it. */
  stage(stage: EngineStage, preview: OutputFile | undefined): Promise<Held | Lost>;
  /** Stores the outputs and completes the job. Once the completion is written, nothing it does may throw. */
  complete(reported: readonly OutputFile[]): Promise<Completed | Lost>;
  /** The sink's fault in a failure, if it is one: handed back rather than failed. */
  fault(reason: unknown): F | undefined;
  /** Writes the end of a run that did not complete; reports its own failures. */
  settle(end: RunEnd<F>): Promise<void>;
  /** Removes the scratch directory; reports its own failures. */
  close(): Promise<void>;
}

/** EngineContext.route as a sink writes it: a record answers whether the job is still the run's. */
export interface RouteSink {
  readonly waitingSinceMs: number;
  acquire(engine: string, max: number): Promise<boolean>;
  release(): Promise<void>;
  record(trail: readonly RouteStep[], engine: string | null): Promise<Held | Lost>;
}

export interface HarnessDeps {
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: Log;
}

/**
 * The stop a loss makes: a cancelled or deleted job is `cancelled` and one failed for its timeout
 * `timeout` (an engine cancels its upstream work on both); any other loss (a reclaim, a lease run
 * out, an end written by someone else) is `lost`, and the work elsewhere is left for the next run.
 */
export function stopWhy(why: LostWhy): RunStopped['why'] {
  if (why === 'cancelled' || why === 'deleted') return 'cancelled';
  return why === 'timeout' ? 'timeout' : 'lost';
}

/**
 * Runs `job` on the engine and writes it through `sink`: exactly one end, whatever stops it
 * (cancel, delete, lost lease, the deadline, `shutdown`, an engine error). At the deadline the
 * harness itself stops the engine with `RunStopped('timeout')`.
 */
export async function runHarnessed<F>(job: EngineJob, sink: RunSink<F>, deps: HarnessDeps, shutdown: AbortSignal): Promise<void> {
  const { clock, log } = deps;
  const run = new AbortController();
  /** The loss that stopped the run, when one did. */
  let lostBy: Lost | undefined;
  const stop = (why: RunStopped['why'], loss?: Lost) => {
    if (run.signal.aborted) return;
    lostBy = loss;
    run.abort(new RunStopped(why));
  };
  const stopLost = (loss: Lost) => stop(stopWhy(loss.why), loss);
  /** After a move: stops the run if the job is no longer its own, and throws the stop. */
  const holds = (answer: Held | Lost) => {
    if (answer.kind === 'lost') stopLost(answer);
    run.signal.throwIfAborted();
  };
  // Ends the heartbeat and the deadline timer when the run is over.
  const background = new AbortController();
  const onShutdown = () => stop('shutdown');
  shutdown.addEventListener('abort', onShutdown, { once: true });
  const unwatch = sink.watch?.(stopLost);
  const progress: { value: number | undefined } = { value: undefined };
  try {
    const left = sink.deadlineMs - clock.nowMs();
    if (left <= 0) stop('timeout');
    if (shutdown.aborted) stop('shutdown');
    run.signal.throwIfAborted();
    if (Number.isFinite(left)) clock.sleep(left, background.signal).then(() => stop('timeout'), () => undefined);
    void heartbeat(sink, deps, background.signal, progress, stopLost, job.id);

    const outDir = await sink.open(run.signal);
    const stages = new StageForwarder({
      stage: async (stage, preview) => {
        run.signal.throwIfAborted();
        holds(await sink.stage(stage, preview));
      },
    });
    const ctx: EngineContext = {
      signal: run.signal,
      outDir,
      loadInput: (url, field) => sink.loadInput(url, field, run.signal),
      loadStyle: (id) => sink.loadStyle(id),
      deadlineMs: sink.deadlineMs,
      progress: (fraction) => {
        if (Number.isFinite(fraction)) progress.value = Math.min(1, Math.max(0, fraction));
      },
      upstream: {
        load: () => sink.loadUpstream(),
        save: async (state) => {
          run.signal.throwIfAborted();
          holds(await sink.saveUpstream(state));
        },
      },
      stage: (stage, preview) => stages.reach(stage, preview),
      ...(sink.route ? { route: routeHooks(sink.route, holds) } : {}),
    };
    const reported = await deps.engine.run(job, ctx);
    run.signal.throwIfAborted();
    // A completion leaves from `sampling` on: an engine that reported fewer stages is moved along.
    await stages.reach('sampling');
    const done = await sink.complete(reported);
    if (done.kind === 'lost') {
      stopLost(done);
      throw run.signal.reason;
    }
  } catch (err) {
    const end = classify(run.signal.aborted ? run.signal.reason : err, lostBy, sink);
    await sink.settle(end).catch((e: unknown) => log.error({ jobId: job.id, err: errorDetail(e) }, "could not write a job run's end"));
  } finally {
    background.abort();
    unwatch?.();
    shutdown.removeEventListener('abort', onShutdown);
    await sink.close();
  }
}

function routeHooks(route: RouteSink, holds: (answer: Held | Lost) => void): NonNullable<EngineContext['route']> {
  return {
    waitingSinceMs: route.waitingSinceMs,
    acquire: (engine, max) => route.acquire(engine, max),
    release: () => route.release(),
    record: async (trail, engine) => holds(await route.record(trail, engine)),
  };
}

/**
 * The one classing of a run's failure. A `RunStopped` no stop of the harness made (an engine's
 * own) counts as a timeout when it says so, else as the engine's failure: the failure's write then
 * learns whether the job was still the run's.
 */
function classify<F>(reason: unknown, lostBy: Lost | undefined, sink: Pick<RunSink<F>, 'fault'>): RunEnd<F> {
  if (reason instanceof RunStopped) {
    if (lostBy) return { kind: 'lost', lost: lostBy };
    if (reason.why === 'shutdown' || reason.why === 'timeout') return { kind: 'stopped', why: reason.why };
  }
  if (reason instanceof RetryableEngineError) return { kind: 'retry', reason };
  const fault = reason instanceof RunStopped ? undefined : sink.fault(reason);
  if (fault !== undefined) return { kind: 'fault', reason, fault };
  return { kind: 'failed', reason, error: clientJobError(reason) };
}

/** Keeps the lease while the run goes on; a refused beat stops the run with its loss. */
async function heartbeat<F>(
  sink: RunSink<F>,
  deps: HarnessDeps,
  signal: AbortSignal,
  progress: { readonly value: number | undefined },
  stopLost: (loss: Lost) => void,
  jobId: string,
): Promise<void> {
  for (;;) {
    try {
      await deps.clock.sleep(sink.beatInMs(), signal);
    } catch {
      return; // The run ended.
    }
    try {
      const answer = await sink.beat(progress.value);
      if (answer.kind === 'lost') return stopLost(answer);
    } catch (err) {
      if (signal.aborted) return;
      // A missed beat only risks the lease; the next one says whether the job is still ours.
      deps.log.warn({ jobId, err: { message: (err as Error).message } }, 'heartbeat failed');
    }
  }
}
