import type { Config } from '../config/config.js';
import { LocalEngine } from '../engines/local/local-engine.js';
import type { Services } from '../services/services.js';
import type { Store } from '../store/store.js';
import { createInputLoader } from '../worker/input-loader.js';
import type { Log } from '../worker/run-job.js';
import { Worker } from '../worker/worker.js';

export interface RunningWorker {
  readonly worker: Worker;
  /** Stops claiming, lets runs finish for the grace period, hands back the rest, closes connections. */
  stop(): Promise<void>;
}

/**
 * The job runner of a `serve` process with role `all` or `worker`: the local engine on this store.
 * On PostgreSQL it also hears other processes' new and cancelled jobs at once (LISTEN).
 */
export async function startWorker(config: Config, services: Services, store: Store, log: Log): Promise<RunningWorker> {
  const inputs = createInputLoader({
    allowPrivate: config.allowPrivateUrls,
    maxBytes: config.inputMaxBytes,
    timeoutMs: config.inputTimeoutMs,
  });
  const worker = new Worker(
    {
      runs: services.runs,
      engine: new LocalEngine({ clock: services.clock, latencyMs: config.engineLatencyMs }),
      outputs: services.outputs,
      clock: services.clock,
      signals: services.signals,
      loadInput: inputs.load,
      log,
    },
    { concurrency: config.workerConcurrency, pollMs: config.pollIntervalMs },
  );
  const stopListening = await store.listen?.((event) => services.signals.relay(event));
  worker.start();
  return {
    worker,
    async stop() {
      await worker.stop(config.shutdownGraceMs);
      await stopListening?.();
      await inputs.close();
    },
  };
}
