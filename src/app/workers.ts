import type { Config } from '../config/config.js';
import type { Engine } from '../engines/engine.js';
import { NodeAppEngine } from '../engines/node-app-engine.js';
import { EngineRouter } from '../engines/router.js';
import { createGuardedDispatcher } from '../lib/safe-fetch.js';
import type { Log } from '../lib/log.js';
import type { OutputStore } from '../outputs/output-store.js';
import { OUTPUT_GRACE_MS, OutputJanitor } from '../services/upkeep/output-janitor.js';
import { stepPreparer } from '../services/node-apps/node-app-steps.js';
import { RetentionJanitor } from '../services/upkeep/retention.js';
import type { Services } from '../services/services.js';
import type { Store } from '../store/store.js';
import { createInputLoader } from '../worker/input-loader.js';
import { sandboxEngine } from './sandbox-wiring.js';
import { WebhookSender } from '../worker/webhook-sender.js';
import { Worker } from '../worker/worker.js';
import type { SlotLoopStopped } from '../worker/slot-loop.js';

/**
 * The janitors' waits vary by ±10%: the worker processes sharing one store start together after a
 * deploy, and without it their sweeps of the same tables would keep falling on the same moment.
 */
const JANITOR_JITTER = 0.1;

/** Spec 6 leaves it open; 15 s is what the big senders give a receiver (docs/webhooks.md). */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** Webhooks in flight per process: one slow receiver takes one of these, not the queue. */
export const WEBHOOK_CONCURRENCY = 32;

/** What the workers are built from: the runtime's parts. */
export interface WorkerParts {
  readonly config: Config;
  readonly store: Store;
  readonly services: Services;
  readonly outputs: OutputStore;
  readonly engine: Engine;
}

/** Settings of one job worker that tests set apart from the config. */
export interface JobWorkerOptions {
  /** Read by the runtime, which hands the engine in as `parts.engine`. */
  readonly engine?: Engine;
  readonly concurrency?: number;
  readonly pollMs?: number;
  /** The worker's own address guard for input URLs (`--allow-private-urls`). */
  readonly allowPrivateUrls?: boolean;
}

export interface JobWorker {
  /** Not started: call `worker.start()`. */
  readonly worker: Worker;
  /** Ends input fetching; call after the worker has stopped. */
  close(): Promise<void>;
}

/**
 * A job worker on these parts: the engine (with node-app jobs' graphs run on it), the input loader,
 * the run policy and the output store.
 */
export function createJobWorker(parts: WorkerParts, log: Log, opts: JobWorkerOptions = {}): JobWorker {
  const { config, services } = parts;
  const router = parts.engine instanceof EngineRouter ? parts.engine : undefined;
  const inputs = createInputLoader(
    {
      allowPrivate: opts.allowPrivateUrls ?? config.allowPrivateUrls,
      maxBytes: config.inputMaxBytes,
      timeoutMs: config.inputTimeoutMs,
    },
    (url, field) => services.assets.readInput(url, field),
  );
  const worker = new Worker(
    {
      runs: services.runs,
      routes: services.routes,
      // In sandbox mode the job's statuses are held and its prompt's markers acted on around the whole job.
      engine: sandboxEngine(
        config,
        new NodeAppEngine({ steps: parts.engine, prepare: stepPreparer(services.catalog, services.bindings.remote) }),
        services.clock,
      ),
      outputs: parts.outputs,
      clock: services.clock,
      signals: services.signals,
      loadInput: inputs.load,
      loadStyle: (id) => services.styles.artifact(id),
      log,
      readiness: services.readiness,
    },
    {
      concurrency: opts.concurrency ?? config.workerConcurrency,
      pollMs: opts.pollMs ?? config.pollIntervalMs,
      types: { except: [...services.bindings.remote.keys()] },
      spill: services.bindings.spill,
      ...(router?.limited ? { limited: { groups: async () => router.limitedGroups(await parts.store.routes.slotsInUse()), claimed: (id, model) => router.claimed(id, model) } } : {}),
    },
  );
  return { worker, close: () => inputs.close() };
}

export interface RunningWorker {
  readonly worker: Worker;
  /**
   * Stops claiming, lets runs finish for the grace period, hands back the rest, sends the webhooks
   * due, closes connections. Says how many jobs were running and how many the grace cut.
   */
  stop(): Promise<SlotLoopStopped>;
}

/**
 * The job runner of a `serve` process with role `all` or `worker`: the job worker, the webhook
 * sender, the output janitor and the retention janitor. On PostgreSQL it also hears other processes' new and cancelled
 * jobs at once (LISTEN). `publicUrl` is where output URLs in webhook payloads point.
 */
export async function startWorkers(parts: WorkerParts, log: Log, publicUrl: () => string): Promise<RunningWorker> {
  const { config, services, store } = parts;
  const jobs = createJobWorker(parts, log);
  // The same connect-time address guard as input fetching (docs/inputs.md), for webhook URLs.
  const dispatcher = createGuardedDispatcher({ allowPrivate: config.allowPrivateUrls });
  const webhooks = new WebhookSender(
    { webhooks: services.webhooks, signals: services.signals, clock: services.clock, dispatcher, publicUrl, log },
    { concurrency: WEBHOOK_CONCURRENCY, pollMs: config.pollIntervalMs, timeoutMs: WEBHOOK_TIMEOUT_MS },
  );
  // Removes output files left by failed removals and crashes: once now, then every interval.
  // An upload's key has no row until it is stored, so the grace outlasts the longest upload: a
  // whole request time, then its inspection.
  const graceMs = Math.max(OUTPUT_GRACE_MS, config.requestTimeoutMs + config.inputDecodeTimeoutMs + 60_000);
  const janitor = new OutputJanitor(store.jobs, parts.outputs, services.clock, log, { intervalMs: config.janitorIntervalMs, jitter: JANITOR_JITTER, graceMs });
  // Prunes what outlived its lifetime (docs/operations.md, "Retention"), on the same interval.
  const retention = new RetentionJanitor(store, parts.outputs, services.clock, log, { ...config.retention, idempotencyKeyHours: config.idempotencyKeyHours }, {
    intervalMs: config.janitorIntervalMs,
    jitter: JANITOR_JITTER,
  });
  const stopListening = await services.signals.hearOthers();
  const { worker } = jobs;
  worker.start();
  webhooks.start();
  janitor.start();
  retention.start();
  return {
    worker,
    async stop() {
      // A sweep stops at its next directory; nothing it leaves undone is lost.
      await janitor.stop();
      await retention.stop();
      // The worker before the sender: jobs ending in its grace period write events the sender then sends.
      const jobsStopped = await worker.stop(config.shutdownGraceMs);
      await webhooks.stop();
      await stopListening();
      await jobs.close();
      await dispatcher.close();
      return jobsStopped;
    },
  };
}
