/**
 * Every place the bench wires the server together, in one file: through the composition root
 * (src/app/runtime.ts), as `mediagen serve` does, with the worker running the given engine instead
 * of the engine router, and a worker set that stops and starts again while the API stays up.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { RunningWorker } from '../../src/app/workers.js';
import { openRuntime } from '../../src/cli/context.js';
import type { Engine } from '../../src/engines/engine.js';
import type { Log } from '../../src/lib/log.js';
import { msToMicros } from '../../src/lib/time.js';
import type { Store } from '../../src/store/store.js';

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
  /**
   * Creates `n` more workspaces as `mediagen admin workspace create` and `token create` do, each with
   * the default workspace's limits and balance (never 402 or 429), and returns one API token of each.
   */
  addWorkspaces(n: number): Promise<string[]>;
  /** Calls `fn` with `performance.now()` each time a transaction announcing `kind` commits here. */
  onCommitted(kind: 'queued' | 'webhook', fn: (at: number) => void): () => void;
  /** Starts this process's job worker (the server's engine and slots), webhook sender and janitor again. */
  startRunner(): Promise<void>;
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
  const runtime = await openRuntime(
    {
      ...serveFlags(o),
      'max-concurrent-jobs': String(limits.maxConcurrentJobs),
      'max-backlogged-jobs': String(limits.maxBackloggedJobs),
      'worker-concurrency': String(o.workerConcurrency ?? 8),
      'shutdown-grace-ms': '5000',
    },
    o.engine ? { engine: o.engine } : {},
  );
  const { config, store, services } = runtime;
  let publicUrl = '';
  const app = await runtime.buildHttp({ publicUrl: () => publicUrl });
  await app.listen({ port: 0, host: '127.0.0.1' });
  publicUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const boot = await services.identity.bootstrap(BALANCE_MICROS);
  if (!boot) throw new Error('the bench store is not empty');

  let runner: RunningWorker | undefined;
  // The job worker, webhook sender and janitor of a `serve` process with role `all`.
  const startRunner = async () => {
    if (runner) throw new Error('the worker is running already');
    runner = await runtime.startWorkers(silentLog, () => publicUrl);
  };
  const stopRunner = async () => {
    const stopping = runner;
    runner = undefined;
    await stopping?.stop();
  };
  if (o.engine) await startRunner();

  return {
    url: publicUrl,
    app,
    store,
    token: boot.secret,
    workspaceId: boot.workspace.id,
    pollMs: config.pollIntervalMs,
    async addWorkspaces(n) {
      const tokens: string[] = [];
      const owner = 'bench@localhost';
      for (let i = 0; i < n; i++) {
        const ws = await services.identity.createWorkspace(`bench-${tokens.length + 1}-${Date.now()}`, owner);
        tokens.push((await services.identity.createToken(ws, 'bench', owner)).secret);
        // The store's top-up, as bootstrap gives the default workspace its balance (the admin CLI caps one at $10,000).
        await store.billing.topUp({ workspaceId: ws.id, amountMicros: BALANCE_MICROS, createdBy: owner, now: msToMicros(runtime.clock.nowMs()) });
      }
      return tokens;
    },
    onCommitted(kind, fn) {
      return store.onEvent((event) => {
        if (event.kind === kind) fn(performance.now());
      });
    },
    startRunner,
    stopRunner,
    async close() {
      await stopRunner();
      await app.close();
      await runtime.close();
    },
  };
}
