import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { publicUrlFor } from '../config/config.js';
import { OPTIONS } from '../config/options.js';
import { buildApp } from '../http/app.js';
import { openContext } from './context.js';

export const SERVE_HELP = `Usage: mediagen serve [options]

Runs the HTTP API on the embedded store. Every option can also be set by environment
variable or config file key (docs/config.md).

Options:
  --config FILE                JSON config file (env MEDIAGEN_CONFIG)
${OPTIONS.map((o) => `  --${`${o.flag}${o.type === 'boolean' ? '' : ' VALUE'}`.padEnd(27)}${o.help} (env ${o.env})`).join('\n')}
  -h, --help                   show this help
`;

export function curlLine(publicUrl: string, token: string): string {
  const body = JSON.stringify({ prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' });
  return (
    `curl -s -X POST ${publicUrl}/generate/image/vendor-a/model-a-2/medium ` +
    `-H "Authorization: Bearer ${token}" -H "Content-Type: application/json" -d '${body}'`
  );
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
  const { config, store, services } = await openContext(values);
  let publicUrl = config.publicUrl ?? '';
  const app = await buildApp({
    ...services,
    publicUrl: () => publicUrl,
    bodyLimitBytes: config.bodyLimitBytes,
    logger: { level: config.logLevel },
  });
  const created = await services.identity.bootstrap();
  await app.listen({ port: config.port, host: config.host });
  publicUrl = publicUrlFor(config, (app.server.address() as AddressInfo).port);

  const out: string[] = [`mediagen: serving ${publicUrl} (store ${config.dataDir})`];
  if (created) {
    // Printed once to the terminal, never logged: the store keeps only the token's hash.
    out.push(
      '',
      `Created workspace "${created.workspace.name}" with owner owner@localhost and an API token.`,
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
  process.stdout.write(`${out.join('\n')}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'draining in-flight requests');
    app
      .close()
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
