#!/usr/bin/env node
import { ConfigError } from './config/config.js';
import { AppError } from './services/errors.js';
import { ADMIN_HELP, admin } from './cli/admin.js';
import { SERVE_HELP, serve } from './cli/serve.js';

const HELP = `mediagen: a server for asynchronous media generation jobs

Usage:
  mediagen serve [options]        run the HTTP API (mediagen serve --help)
  mediagen admin <command> ...    manage workspaces, members and tokens (mediagen admin --help)
`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'admin':
      return admin(rest);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(`${HELP}\n${SERVE_HELP}\n${ADMIN_HELP}`);
      return;
    default:
      throw new ConfigError(`unknown command '${command}'\n\n${HELP}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // Refusals and bad input are explained in one line; anything else is a bug and keeps its stack.
  const known = err instanceof AppError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`mediagen: ${known ? (err as Error).message : (err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
