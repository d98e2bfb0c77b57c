import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError } from '../config/config.js';
import { MAX_REMOTE_CONCURRENCY, SHARED_OPTIONS, WORKER_TOKEN_ENV, WORKER_URL_ENV, remoteWorkerSettings } from '../config/remote-worker-settings.js';
import { systemClock } from '../lib/clock.js';
import { firstSignal } from './graceful-shutdown.js';
import { optionLine } from './help-columns.js';

export const REMOTE_WORKER_HELP = `Usage: mediagen remote-worker --server URL [--token TOKEN] [--models PATTERN]...
                             [--pool P] [--concurrency N] [--worker-id NAME] [options]

Runs jobs for a mediagen server from another machine, over the worker protocol
(/worker/v1, docs/workers.md): it claims jobs of the models bound to a remote pool
(config file model_engines: "remote:<pool>"), runs them on its engines (the
built-in one, or those --config names), and uploads the results.

Options:
  --server URL                 the mediagen server, e.g. http://10.0.0.5:8080 (env ${WORKER_URL_ENV})
  --token TOKEN                a worker token, from mediagen admin worker-token create
                               (env ${WORKER_TOKEN_ENV}; prefer the variable: a flag
                               shows in the process list)
  --models PATTERN             claim only jobs of these models (repeatable; * matches
                               any characters, e.g. image/*); default: every model the
                               local engine can run
  --pool P                     claim only jobs of models bound to remote:P
  --concurrency N              jobs run at once, 1 to ${MAX_REMOTE_CONCURRENCY} (default 1)
  --worker-id NAME             this instance's name in the server's presence list and
                               logs (default: the host name)
  --config FILE                run the engines this config file names for its models
                               (providers, model_engines, models, upstream; docs/engines.md,
                               docs/providers.md); without it, the built-in engine
${SHARED_OPTIONS.map((o) => optionLine(`${o.flag} VALUE`, `${o.help} (env ${o.env})`)).join('\n')}
  -h, --help                   show this help

On SIGTERM or SIGINT it stops claiming, lets running jobs finish for the shutdown
grace, then hands the rest back to the server's queue.
`;

export async function remoteWorker(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      models: { type: 'string', multiple: true },
      pool: { type: 'string' },
      concurrency: { type: 'string' },
      'worker-id': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(SHARED_OPTIONS.map((o) => [o.flag, { type: 'string' } as const])),
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(REMOTE_WORKER_HELP);
    return;
  }
  const signal = firstSignal();
  const settings = remoteWorkerSettings(values);
  const { config } = settings;
  // stdout is for the operator; the JSON log goes to stderr. The token is in neither.
  const log = pino({ level: config.logLevel }, process.stderr);
  const [{ buildEngineSet, wireModels, UpstreamNudges }, { WorkerClient }, { RemoteWorker }, media] = await Promise.all([
    import('../app/engine-set.js'),
    import('../worker/remote/protocol-client.js'),
    import('../worker/remote/remote-worker.js'),
    import('../engines/media/media-tools.js'),
  ]);
  // The same FFmpeg choice as `serve`: ffmpeg_path, else PATH, else bundled; a path that cannot be run stops the start.
  media.configureMediaTools(config);
  const tools = await media.describeMediaTools().catch((err: unknown) => {
    throw new ConfigError((err as Error).message);
  });
  // The engines the config file names (without one: the built-in engine), as serve builds them.
  const wiring = wireModels(config);
  const engines = await buildEngineSet(config, wiring, { clock: systemClock, nudges: new UpstreamNudges(), log });
  const engine = engines.router;
  const models = settings.models ?? wiring.catalog.entries.map((m) => m.path).filter((path) => engine.engineFor(path) !== undefined);
  const worker = new RemoteWorker({
    client: new WorkerClient({ server: settings.server, token: settings.token, clock: systemClock }),
    engine,
    clock: systemClock,
    log,
    inputs: { maxBytes: config.inputMaxBytes, timeoutMs: config.inputTimeoutMs },
    concurrency: settings.concurrency,
    models,
    ...(settings.pool ? { pool: settings.pool } : {}),
    workerId: settings.workerId,
  });
  worker.start();
  process.stdout.write(
    `mediagen: remote worker ${settings.workerId} running up to ${settings.concurrency} jobs at once for ${settings.server.origin}` +
      `${settings.pool ? ` (pool ${settings.pool})` : ''}\n`,
  );
  process.stdout.write(`mediagen: ${media.mediaToolsLine(tools)}\n`);
  for (const warning of media.mediaToolsWarnings(tools)) process.stdout.write(`mediagen: warning: ${warning}\n`);

  const outcome = await Promise.race([signal.then((s) => ({ signal: s })), worker.done.then(() => ({}), (err: unknown) => ({ refused: err as Error }))]);
  if ('signal' in outcome) log.info({ signal: outcome.signal, runningJobs: worker.running }, 'shutting down');
  await worker.stop(config.shutdownGraceMs);
  await engines.close();
  if ('refused' in outcome && outcome.refused) {
    process.stderr.write(`mediagen: ${outcome.refused.message}\n`);
    process.exit(1);
  }
  process.exit(0);
}
