import { Mediagen } from '../index.js';
import { clientSettings } from './settings.js';

/** A stream a command writes to: stdout or stderr, or a test's stand-in. */
export interface Out {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Where a client command writes, and how it gets its client. */
export interface ClientContext {
  readonly stdout: Out;
  readonly stderr: Out;
  /** The command's name in help and hints: `mediagen` (the server's binary, the default) or `mediagen-client` (the package's). */
  readonly program?: string;
  /** The typed client for the command's --url/--token (or MEDIAGEN_URL/MEDIAGEN_TOKEN). */
  client(flags: { url?: string | undefined; token?: string | undefined }, tokenRequired: boolean): Mediagen;
}

/** `text` (help, a hint, an error line) with the commands called by the name they were run as. */
export function named(ctx: Pick<ClientContext, 'program'>, text: string): string {
  const program = ctx.program ?? 'mediagen';
  return program === 'mediagen' ? text : text.replace(/\bmediagen(?=:| (?:generate|jobs|assets|models|usage)\b)/g, program);
}

/** Prints a command's help (named as the command was run) and returns the exit status. */
export function help(ctx: ClientContext, text: string): number {
  ctx.stdout.write(named(ctx, text));
  return 0;
}

export function processContext(program = 'mediagen'): ClientContext {
  const ctx: ClientContext = {
    stdout: process.stdout,
    // What goes to stderr is the command's own (progress, hints, errors), so it is renamed whole.
    stderr: {
      write: (text: string) => process.stderr.write(named(ctx, text)),
      get isTTY() {
        return process.stderr.isTTY;
      },
      get columns() {
        return process.stderr.columns;
      },
    },
    program,
    client(flags, tokenRequired) {
      const { baseUrl, token } = clientSettings(flags, { tokenRequired });
      return new Mediagen({ baseUrl, ...(token !== undefined ? { token } : {}) });
    },
  };
  return ctx;
}
