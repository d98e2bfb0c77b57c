import type { Config } from '../config/config.js';
import type { Engine } from '../engines/engine.js';
import { LocalEngine } from '../engines/local/local-engine.js';
import type { MediaLimits } from '../engines/media-limits.js';
import { EngineRouter } from '../engines/router.js';
import { OutputJanitor } from '../services/output-janitor.js';
import type { Services } from '../services/services.js';
import type { Store } from '../store/store.js';
import { createGuardedDispatcher } from '../lib/safe-fetch.js';
import { createInputLoader } from '../worker/input-loader.js';
import type { Log } from '../lib/log.js';
import { WebhookSender } from '../worker/webhook-sender.js';
import { Worker } from '../worker/worker.js';

/** Spec 6 leaves it open; 15 s is what the big senders give a receiver (docs/webhooks.md). */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** Webhooks in flight per process: one slow receiver takes one of these, not the queue. */
export const WEBHOOK_CONCURRENCY = 32;

export interface RunningWorker {
  readonly worker: Worker;
  readonly webhooks: WebhookSender;
  readonly janitor: OutputJanitor;
  /** Stops claiming, lets runs finish for the grace period, hands back the rest, closes connections. */
  stop(): Promise<void>;
}

/**
 * The job runner of a `serve` process with role `all` or `worker`: the local engine on this store,
 * and the webhook sender. On PostgreSQL it also hears other processes' new and cancelled jobs at
 * once (LISTEN). `publicUrl` is where output URLs in webhook payloads point.
 */
export async function startWorker(
  config: Config,
  services: Services,
  store: Store,
  log: Log,
  publicUrl: () => string,
  engine: Engine = buildEngines(config, services),
): Promise<RunningWorker> {
  const inputs = createInputLoader({
    allowPrivate: config.allowPrivateUrls,
    maxBytes: config.inputMaxBytes,
    timeoutMs: config.inputTimeoutMs,
  });
  const worker = new Worker(
    {
      runs: services.runs,
      engine,
      outputs: services.outputs,
      clock: services.clock,
      signals: services.signals,
      loadInput: inputs.load,
      log,
      readiness: services.readiness,
    },
    { concurrency: config.workerConcurrency, pollMs: config.pollIntervalMs },
  );
  // The same connect-time address guard as input fetching (docs/inputs.md), for webhook URLs.
  const dispatcher = createGuardedDispatcher({ allowPrivate: config.allowPrivateUrls });
  const webhooks = new WebhookSender(
    { webhooks: services.webhooks, signals: services.signals, clock: services.clock, dispatcher, publicUrl, log },
    { concurrency: WEBHOOK_CONCURRENCY, pollMs: config.pollIntervalMs, timeoutMs: WEBHOOK_TIMEOUT_MS },
  );
  // Removes output files left by failed removals and crashes: once now, then every interval.
  const janitor = new OutputJanitor(store.jobs, services.outputs, services.clock, log, { intervalMs: config.janitorIntervalMs });
  const stopListening = await store.listen?.((event) => services.signals.relay(event));
  worker.start();
  webhooks.start();
  janitor.start();
  return {
    worker,
    webhooks,
    janitor,
    async stop() {
      // A sweep stops at its next directory; nothing it leaves undone is lost.
      await janitor.stop();
      // The worker before the sender: jobs ending in its grace period write events the sender then sends.
      await worker.stop(config.shutdownGraceMs);
      await webhooks.stop();
      await stopListening?.();
      await inputs.close();
      await dispatcher.close();
    },
  };
}

/**
 * The engines of this process behind one router, bound as the models' modules and the config's
 * `model_engines` say. Throws a ConfigError naming a model no engine can run: `serve` builds this
 * before it listens, so such a server never starts.
 */
export function buildEngines(config: Config, services: Services): EngineRouter {
  const local = new LocalEngine({ clock: services.clock, latencyMs: config.engineLatencyMs, limits: mediaLimits(config) });
  return EngineRouter.build(services.catalog.entries, [local], config.modelEngines);
}

/** The `input_max_*` and `input_decode_*` settings, as the engine takes them. */
export function mediaLimits(config: Config): MediaLimits {
  return {
    videoSeconds: config.inputMaxVideoSeconds,
    videoFrames: config.inputMaxVideoFrames,
    videoPixels: config.inputMaxVideoPixels,
    streams: config.inputMaxStreams,
    imagePixels: config.inputMaxImagePixels,
    decodeWallMs: config.inputDecodeTimeoutMs,
    decodeCpuSeconds: config.inputDecodeCpuSeconds,
  };
}
