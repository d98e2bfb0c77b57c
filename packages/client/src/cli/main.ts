#!/usr/bin/env node
/**
 * `mediagen-client`: the client commands of the `mediagen` binary (`generate`, `jobs`, `assets`,
 * `models`, `usage`) without the server: what `npm install @mediagen/client` puts on the PATH.
 * Its own name, so a project that has the server too keeps `mediagen` for the server's binary.
 */
import { readFileSync } from 'node:fs';
import { CLIENT_COMMANDS, CLIENT_HELP, runClient } from './dispatch.js';
import { named, processContext } from './context.js';

const PROGRAM = 'mediagen-client';

const HELP = `${PROGRAM}: the command line of a mediagen server's API (the @mediagen/client package)

  ${PROGRAM} generate|jobs|assets|models|usage ...   (each with --help)
  ${PROGRAM} --version

`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const ctx = processContext(PROGRAM);
  if ((CLIENT_COMMANDS as readonly string[]).includes(command ?? '')) return runClient(command as (typeof CLIENT_COMMANDS)[number], rest, ctx);
  if (command === '--version' || command === '-V') {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return;
  }
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(named(ctx, `${HELP}${CLIENT_HELP}`));
    return;
  }
  process.stderr.write(`${PROGRAM}: unknown command '${command}'; the commands are: ${CLIENT_COMMANDS.join(', ')} (${PROGRAM} --help)\n`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${PROGRAM}: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
