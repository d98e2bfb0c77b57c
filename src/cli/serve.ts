import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { ConfigError, publicUrlFor } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { Runtime } from '../app/runtime.js';
import { OPTIONS } from '../config/options.js';
import { logSerializers } from '../http/logging.js';
import { openRuntime } from './context.js';
import { optionLine } from './help-columns.js';
import { drainProcess, firstSignal, trackInFlight } from './graceful-shutdown.js';
import { mediaToolsLine, mediaToolsWarnings } from '../engines/media/media-tools.js';

export const SERVE_HELP = `Usage: mediagen serve [options]

Runs the HTTP API and the job runner (see --role) on the embedded store or on
PostgreSQL. Every option can also be set by environment variable or config file key
(docs/config.md).

Options:
  --config FILE                JSON config file (env MEDIAGEN_CONFIG)
${OPTIONS.map((o) => optionLine(`${o.flag}${o.type === 'boolean' ? '' : ' VALUE'}`, `${o.help} (env ${o.env})`)).join('\n')}
  -h, --help                   show this help
`;

export function curlLine(publicUrl: string, token: string): string {
  const body = JSON.stringify({ prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' });
  return (
    `curl -s -X POST ${publicUrl}/generate/image/vendor-a/model-a-2/medium ` +
    `-H "Authorization: Bearer ${token}" -H "Content-Type: application/json" -d '${body}'`
  );
}

/**
 * Where the store is, for the operator: the data dir, or the PostgreSQL server and database
 * (`postgresql://db.internal:5432/mediagen`), never its user, password or options.
 */
export function storeLabel(config: Pick<Config, 'dataDir' | 'databaseUrl'>): string {
  if (!config.databaseUrl) return config.dataDir;
  try {
    const url = new URL(config.databaseUrl);
    return `postgresql://${url.host || 'localhost'}${url.pathname || '/'}`;
  } catch {
    return 'PostgreSQL';
  }
}

function banner(boundUrl: string, publicUrl: string, store: string, created?: { name: string; secret: string }): string {
  const where = publicUrl === boundUrl ? '' : `public URL ${publicUrl}, `;
  const out = [`mediagen: serving ${boundUrl} (${where}store ${store})`];
  if (created) {
    // Printed once to the terminal, never logged: the store keeps only the token's hash.
    out.push(
      '',
      `Created workspace "${created.name}" with owner owner@localhost and an API token.`,
      'The token is shown only this once; keep it:',
      '',
      `  ${created.secret}`,
      '',
      'Create a job:',
      '',
      `  ${curlLine(publicUrl, created.secret)}`,
      '',
    );
  }
  return `${out.join('\n')}\n`;
}

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(OPTIONS.map((o) => [o.flag, { type: o.type === 'boolean' ? 'boolean' : 'string' } as const])),
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return;
  }
  const signal = firstSignal();
  const runtime = await openRuntime(values);
  const { config, store, services } = runtime;
  // stdout is for the operator (the banner); the JSON log goes to stderr.
  const log = pino({ level: config.logLevel, serializers: logSerializers }, process.stderr);
  // Before listening: a model no engine here can run stops the start, naming the model.
  if (config.role !== 'api') await runtime.engine(log);
  // So does an ffmpeg_path or ffprobe_path that cannot be run (every role decodes uploads or renders).
  const tools = await runtime.mediaTools().catch(async (err: unknown) => {
    await runtime.close();
    throw new ConfigError((err as Error).message);
  });
  // In every role: a worker-only process has no API listener, and this is how it is scraped.
  const metrics = await startMetrics(runtime, log);
  const http = config.role === 'worker' ? undefined : await startHttp(runtime, log);
  // A worker-only process has no listener: payload URLs use --public-url, else host and port.
  const publicUrl = () => http?.publicUrl ?? publicUrlFor(config, config.port);
  const runner = config.role === 'api' ? undefined : await runtime.startWorkers(log, publicUrl);
  if (http) {
    // Only once listening: a token created by a start that then fails would never be shown.
    const created = await services.identity.bootstrap();
    process.stdout.write(banner(http.boundUrl, http.publicUrl, storeLabel(config), created && { name: created.workspace.name, secret: created.secret }));
  }
  process.stdout.write(
    runner
      ? `mediagen: running up to ${config.workerConcurrency} jobs at once${http ? '' : ` (worker only, store ${storeLabel(config)})`}\n`
      : 'mediagen: API only; jobs run in processes started with --role worker\n',
  );
  // After the serving line, which stays the first line of stdout: the FFmpeg every render and
  // input decode runs, and a warning when it is older than 5.1 (the bundled one is 4.1).
  process.stdout.write(`mediagen: ${mediaToolsLine(tools)}\n`);
  // On stdout with the other lines for the operator, not in the JSON log: nothing failed.
  for (const warning of mediaToolsWarnings(tools)) process.stdout.write(`mediagen: warning: ${warning}\n`);
  if (metrics) process.stdout.write(`mediagen: metrics at ${metrics.url}/metrics\n`);
  if (config.sandbox) {
    process.stdout.write('mediagen: SANDBOX mode: prompts ending in [mediagen:...] markers fail, time out or take longer on purpose, and each status lasts at least 1.1 s (docs/sandbox.md)\n');
  }

  const drained = await drainProcess(await signal, {
    ...(http ? { http: { server: http.app.server, inFlight: http.inFlight, close: () => http.app.close() } } : {}),
    ...(runner ? { runner } : {}),
    readiness: services.readiness,
    drainDelayMs: config.drainDelayMs,
    graceMs: config.shutdownGraceMs,
    log,
  });
  // Closed after the drain: a scrape during shutdown still answers.
  await metrics?.close();
  await store.close();
  process.exit(drained ? 0 : 1);
}

async function startMetrics(runtime: Runtime, log: FastifyBaseLogger) {
  const { config } = runtime;
  try {
    const server = await runtime.serveMetrics(log);
    return server;
  } catch (err) {
    await runtime.close();
    if (typeof (err as { code?: unknown }).code !== 'string') throw err;
    throw new ConfigError(`cannot listen on ${config.metricsHost} port ${config.metricsPort} for metrics: ${(err as Error).message}`);
  }
}

async function startHttp(runtime: Runtime, log: FastifyBaseLogger) {
  const { config, store } = runtime;
  let publicUrl = config.publicUrl ?? '';
  const app = await runtime.buildHttp({ publicUrl: () => publicUrl, logger: log });
  const inFlight = trackInFlight(app.server);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close().catch(() => undefined);
    await store.close();
    if (typeof (err as { code?: unknown }).code !== 'string') throw err;
    throw new ConfigError(`cannot listen on ${config.host} port ${config.port}: ${(err as Error).message}`);
  }
  const port = (app.server.address() as AddressInfo).port;
  publicUrl = publicUrlFor(config, port);
  return { app, inFlight, publicUrl, boundUrl: publicUrlFor({ ...config, publicUrl: undefined }, port) };
}
