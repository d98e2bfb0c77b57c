import { Mediagen } from '../client/index.js';
import { clientSettings } from '../config/client-settings.js';

/** Where a client command writes, and how it gets its client. */
export interface ClientContext {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  /** The typed client for the command's --url/--token (or MEDIAGEN_URL/MEDIAGEN_TOKEN). */
  client(flags: { url?: string | undefined; token?: string | undefined }, tokenRequired: boolean): Mediagen;
}

export function processContext(): ClientContext {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    client(flags, tokenRequired) {
      const { baseUrl, token } = clientSettings(flags, { tokenRequired });
      return new Mediagen({ baseUrl, ...(token !== undefined ? { token } : {}) });
    },
  };
}
