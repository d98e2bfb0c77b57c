#!/usr/bin/env node
import { ConfigError } from './config/config.js';
import { cliErrorText } from './cli/error-text.js';

const HELP = `mediagen: a server for asynchronous media generation jobs

Usage:
  mediagen serve [options]        run the HTTP API (mediagen serve --help)
  mediagen admin <command> ...    manage workspaces, members and tokens (mediagen admin --help)
  mediagen mcp --url URL          the server's MCP tools over stdio, for desktop assistants (mediagen mcp --help)
  mediagen generate MODEL ...     create a job on a running server, follow it, download its outputs (see below)
  mediagen jobs|assets|models|usage ...   the server's jobs, uploads, models and usage (see below)
  mediagen remote-worker ...      run jobs for a server from another machine (mediagen remote-worker --help)
  mediagen --version              print the version
`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    // Each command loads only what it uses: `admin` never loads the HTTP stack.
    case 'serve':
      return (await import('./cli/serve.js')).serve(rest);
    case 'admin':
      return (await import('./cli/admin.js')).admin(rest);
    case 'mcp':
      return (await import('./cli/mcp.js')).mcp(rest);
    case 'remote-worker':
      return (await import('./cli/remote-worker-command.js')).remoteWorker(rest);
    case 'generate':
    case 'jobs':
    case 'assets':
    case 'models':
    case 'usage':
      // The client commands are the @mediagen/client package's (packages/client, built before this
      // file by `npm run build`; the bundle inlines them). They set their own exit status (docs/clients.md).
      return (await import('../packages/client/dist/cli/dispatch.js')).runClient(command, rest);
    case '--version':
    case '-V':
      process.stdout.write(`${(await import('./cli/version.js')).packageVersion()}\n`);
      return;
    case undefined:
    case '-h':
    case '--help':
    case 'help': {
      const [{ SERVE_HELP }, { ADMIN_HELP }, { MCP_HELP }, { CLIENT_HELP }, { REMOTE_WORKER_HELP }] = await Promise.all([
        import('./cli/serve.js'),
        import('./cli/admin.js'),
        import('./cli/mcp.js'),
        import('../packages/client/dist/cli/dispatch.js'),
        import('./cli/remote-worker-command.js'),
      ]);
      process.stdout.write(`${HELP}\n${SERVE_HELP}\n${ADMIN_HELP}\n${MCP_HELP}\n${CLIENT_HELP}\n${REMOTE_WORKER_HELP}`);
      return;
    }
    default:
      throw new ConfigError(`unknown command '${command}'; run 'mediagen --help' for usage`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // Refusals and bad input are explained in one line; anything else is a bug and keeps its stack.
  const text = cliErrorText(err) ?? (err as Error)?.stack ?? String(err);
  process.stderr.write(`mediagen: ${text}\n`);
  process.exit(1);
});
