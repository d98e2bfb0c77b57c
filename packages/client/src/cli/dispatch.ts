/**
 * The client commands of the `mediagen` binary: `generate`, `jobs`, `assets`, `models`, `usage`.
 * They talk to a running server over HTTP through the typed client (this package), never to a store. The server's `mediagen`
 * binary runs them from here too (src/main.ts).
 */
import { CLIENT_TOKEN_ENVS, CLIENT_URL_ENV } from './settings.js';
import { EXIT_HELP, UsageError, describeError } from './exit.js';
import { JOBS_ID_HELP, JOBS_LIST_HELP, assetsCommand, jobsById, jobsList, usageCommand } from './commands.js';
import { help, processContext } from './context.js';
import { modelsCommand } from './models.js';
import type { ClientContext } from './context.js';
import { WAIT_HELP, generateCommand, waitCommand } from './generate.js';

export const CLIENT_COMMANDS = ['generate', 'jobs', 'assets', 'models', 'usage'] as const;

export const CLIENT_HELP = `Client commands (talk to a running server; docs/clients.md):
  mediagen generate MODEL --prompt TEXT [--set KEY=VALUE|KEY=@FILE]... [--wait] [--out DIR] [--json]
  mediagen jobs list [--status S] [--all]   mediagen jobs get|cancel|delete|wait ID
  mediagen assets upload FILE [--description TEXT]
  mediagen models [show MODEL]              mediagen usage [--start T] [--end T]
Each takes --url URL (env ${CLIENT_URL_ENV}) and --token TOKEN (env ${CLIENT_TOKEN_ENVS[0]}, or
${CLIENT_TOKEN_ENVS[1]}; prefer the variable: a flag shows in the process list), --json and --help.
${EXIT_HELP}`;

async function jobsCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list':
      return jobsList(ctx, rest);
    case 'get':
    case 'cancel':
    case 'delete':
      return jobsById(ctx, sub, rest);
    case 'wait':
      return waitCommand(ctx, rest);
    case undefined:
    case '-h':
    case '--help':
      return help(ctx, `${JOBS_LIST_HELP}\n${JOBS_ID_HELP}\n${WAIT_HELP}`);
    default:
      throw new UsageError(`unknown jobs command '${sub}'; the commands are: list, get, cancel, delete, wait`);
  }
}

function dispatch(ctx: ClientContext, command: (typeof CLIENT_COMMANDS)[number], argv: string[]): Promise<number> {
  switch (command) {
    case 'generate':
      return generateCommand(ctx, argv);
    case 'jobs':
      return jobsCommand(ctx, argv);
    case 'assets':
      return assetsCommand(ctx, argv);
    case 'models':
      return modelsCommand(ctx, argv);
    case 'usage':
      return usageCommand(ctx, argv);
  }
}

/**
 * Runs one client command and sets the exit status (docs/clients.md): a refusal, a usage mistake
 * or an unreachable server is one `mediagen: ...` line on stderr, never a stack.
 */
export async function runClient(command: (typeof CLIENT_COMMANDS)[number], argv: string[], ctx: ClientContext = processContext()): Promise<void> {
  try {
    process.exitCode = await dispatch(ctx, command, argv);
  } catch (err) {
    const known = describeError(err);
    if (!known) throw err;
    ctx.stderr.write(`mediagen: ${known.line}\n`);
    process.exitCode = known.code;
  }
}
