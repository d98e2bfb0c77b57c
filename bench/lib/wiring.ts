/**
 * Every place the bench wires the server together, in one file: the lead switches this file (and
 * only this file) to the composition root (src/app/runtime.ts) when it lands. It follows what
 * `mediagen serve` does (src/cli/serve.ts, start-worker.ts) with two differences the bench needs:
 * the worker runs the given engine instead of the local renderer, and the output janitor does not
 * run (its sweeps would be noise; it has nothing to do in a fresh data dir).
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { openContext } from '../../src/cli/context.js';
import { httpOptionsFor } from '../../src/cli/serve.js';
import { WEBHOOK_CONCURRENCY, WEBHOOK_TIMEOUT_MS } from '../../src/cli/start-worker.js';
import type { Engine } from '../../src/engines/engine.js';
import { buildApp } from '../../src/http/app.js';
import type { Log } from '../../src/lib/log.js';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import type { Store } from '../../src/store/store.js';
import { createInputLoader } from '../../src/worker/input-loader.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { Worker } from '../../src/worker/worker.js';

export interface ServerOptions {
  /** The data dir: the SQLite file (unless `databaseUrl`) and outputs. */
  readonly dataDir: string;
  readonly databaseUrl?: string | undefined;
  /** Runs jobs (and sends webhooks) in this process with this engine; absent: API only. */
  readonly engine?: Engine | undefined;
  readonly workerConcurrency?: number;
  /** The default workspace's limits; default high enough that no create is refused with 429. */
  readonly limits?: { readonly maxConcurrentJobs: number; readonly maxBackloggedJobs: number };
}

export interface BenchServer {
  /** Where the API listens on loopback. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly store: Store;
  /** A token of the default workspace, whose balance is large enough never to answer 402. */
  readonly token: string;
  readonly workspaceId: string;
  /** The backstop poll of workers started with the same flags (`poll_interval_ms`). */
  readonly pollMs: number;
  /** Calls `fn` with `performance.now()` each time a transaction announcing `kind` commits here. */
  onCommitted(kind: 'queued' | 'webhook', fn: (at: number) => void): () => void;
  /** Starts this process's job worker and webhook sender with `engine` (`concurrency` job slots). */
  startRunner(engine: Engine, concurrency: number): Promise<void>;
  /** Stops them (running jobs get 5 s), leaving the API up: jobs then wait for another process. */
  stopRunner(): Promise<void>;
  close(): Promise<void>;
}

const silentLog: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** $1,000,000 in micro-USD. */
const BALANCE_MICROS = 1e12;

/** Flags as `mediagen serve` takes them, so the config is read the way the CLI reads it. */
export function serveFlags(o: { dataDir: string; databaseUrl?: string | undefined }): Record<string, string | boolean> {
  return {
    'data-dir': o.dataDir,
    ...(o.databaseUrl ? { 'database-url': o.databaseUrl } : {}),
    // Webhooks go to a loopback receiver.
    'allow-private-urls': true,
    'log-level': 'warn',
  };
}

export async function startServer(o: ServerOptions): Promise<BenchServer> {
  const limits = o.limits ?? { maxConcurrentJobs: 100_000, maxBackloggedJobs: 1_000_000 };
  const { config, store, services } = await openContext({
    ...serveFlags(o),
    'max-concurrent-jobs': String(limits.maxConcurrentJobs),
    'max-backlogged-jobs': String(limits.maxBackloggedJobs),
  });
  let publicUrl = '';
  const app = await buildApp({ ...services, ...httpOptionsFor(config), publicUrl: () => publicUrl });
  await app.listen({ port: 0, host: '127.0.0.1' });
  publicUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const boot = await services.identity.bootstrap(BALANCE_MICROS);
  if (!boot) throw new Error('the bench store is not empty');

  let stopRunner: (() => Promise<void>) | undefined;
  // The job worker and webhook sender of a `serve` process with role `all`, running `engine`.
  const startRunner = async (engine: Engine, concurrency: number) => {
    if (stopRunner) throw new Error('the worker is running already');
    const inputs = createInputLoader({ allowPrivate: true, maxBytes: config.inputMaxBytes, timeoutMs: config.inputTimeoutMs });
    const worker = new Worker(
      {
        runs: services.runs,
        engine,
        outputs: services.outputs,
        clock: services.clock,
        signals: services.signals,
        loadInput: inputs.load,
        log: silentLog,
        readiness: services.readiness,
      },
      { concurrency, pollMs: config.pollIntervalMs },
    );
    const dispatcher = createGuardedDispatcher({ allowPrivate: true });
    const webhooks = new WebhookSender(
      { webhooks: services.webhooks, signals: services.signals, clock: services.clock, dispatcher, publicUrl: () => publicUrl, log: silentLog },
      { concurrency: WEBHOOK_CONCURRENCY, pollMs: config.pollIntervalMs, timeoutMs: WEBHOOK_TIMEOUT_MS },
    );
    const stopListening = await store.listen?.((event) => services.signals.relay(event));
    worker.start();
    webhooks.start();
    stopRunner = async () => {
      stopRunner = undefined;
      await worker.stop(5_000);
      await webhooks.stop();
      await stopListening?.();
      await inputs.close();
      await dispatcher.close();
    };
  };
  if (o.engine) await startRunner(o.engine, o.workerConcurrency ?? 8);

  return {
    url: publicUrl,
    app,
    store,
    token: boot.secret,
    workspaceId: boot.workspace.id,
    pollMs: config.pollIntervalMs,
    onCommitted(kind, fn) {
      return store.onEvent((event) => {
        if (event.kind === kind) fn(performance.now());
      });
    },
    startRunner,
    stopRunner: async () => stopRunner?.(),
    async close() {
      await stopRunner?.();
      await app.close();
      await store.close();
    },
  };
}
