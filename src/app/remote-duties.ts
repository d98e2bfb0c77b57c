import type { Config } from '../config/config.js';
import type { BackgroundTask } from '../http/app.js';
import type { Log } from '../lib/log.js';
import { createRemoteProtocol } from '../services/remote/remote-protocol.js';
import type { RemoteProtocol } from '../services/remote/remote-protocol.js';
import type { Services } from '../services/services.js';
import type { Store } from '../store/store.js';
import type { InputLoader } from '../worker/input-loader.js';

const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The worker protocol of one HTTP app, and what must run as long as the app does. */
export interface RemoteDuties {
  readonly protocol: RemoteProtocol;
  readonly background: readonly BackgroundTask[];
}

/**
 * The worker protocol as an HTTP app serves it (docs/workers.md): its use cases, with inputs
 * loaded by the same guarded loader as in-process runs (built on the first input asked for, so a
 * server without remote workers never loads it), and the tasks living with the app: remote-job
 * maintenance, and, in an `api`-only process (whose jobs no in-process worker runs), the other
 * processes' events relayed to this one's signals so a waiting claim wakes at once for a job
 * created elsewhere (a `serve` with a worker already listens).
 */
export function remoteDuties(config: Config, store: Store, services: Services, log: Log = quiet): RemoteDuties {
  let loader: Promise<InputLoader> | undefined;
  const load = () =>
    (loader ??= import('../worker/input-loader.js').then(({ createInputLoader }) =>
      createInputLoader(
        { allowPrivate: config.allowPrivateUrls, maxBytes: config.inputMaxBytes, timeoutMs: config.inputTimeoutMs },
        (url, field) => services.assets.readInput(url, field),
      ),
    ));
  const protocol = createRemoteProtocol(services, store.queue, {
    pollMs: config.pollIntervalMs,
    outputMaxBytes: config.workerOutputMaxBytes,
    loadInput: async (url, field, signal) => (await load()).load(url, field, signal),
    log,
  });
  const remote = services.bindings.remote.size > 0;
  const background: BackgroundTask[] = [protocol.maintenance, { start: () => undefined, stop: async () => (loader ? (await loader).close() : undefined) }];
  if (remote && config.role === 'api') background.push(hearOthers(services, log));
  return { protocol, background };
}

/** Other processes' committed events, into this process's signals (the one shared subscription), while the app runs. */
function hearOthers(services: Services, log: Log): BackgroundTask {
  let stopping: Promise<(() => Promise<void>) | undefined> | undefined;
  return {
    start: () => {
      stopping = services.signals.hearOthers().catch((err: unknown) => {
        // Claims still find new jobs, at their poll interval.
        log.warn({ err: { message: (err as Error).message } }, "cannot hear other processes' jobs; remote claims wait for their poll");
        return undefined;
      });
    },
    stop: async () => {
      await (await stopping)?.();
    },
  };
}
