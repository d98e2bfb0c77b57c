import { ConfigError } from './config.js';
import { firstEnv, serverUrlOf } from './readers.js';

/** Where the client commands (`mediagen generate|jobs|assets|models|usage`) find their server and token. */
export const CLIENT_URL_ENV = 'MEDIAGEN_URL';
/** The token variables, first found wins: MEDIAGEN_TOKEN, then `mediagen mcp`'s MEDIAGEN_API_TOKEN. */
export const CLIENT_TOKEN_ENVS = ['MEDIAGEN_TOKEN', 'MEDIAGEN_API_TOKEN'] as const;

export interface ClientSettings {
  /** The server's base URL, with its path prefix if it has one. */
  readonly baseUrl: string;
  /** Absent only where the command may go without (`mediagen models`). */
  readonly token: string | undefined;
}

/**
 * The client commands' settings: `--url` and `--token` first, then MEDIAGEN_URL and MEDIAGEN_TOKEN
 * (or MEDIAGEN_API_TOKEN, the name `mediagen mcp` reads). The token is better given by
 * environment: a flag shows in the process list.
 */
export function clientSettings(
  flags: { url?: string | undefined; token?: string | undefined },
  opts: { tokenRequired: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ClientSettings {
  const raw = flags.url ?? env[CLIENT_URL_ENV];
  if (!raw) throw new ConfigError(`give the mediagen server's URL with --url or ${CLIENT_URL_ENV}`);
  const from = flags.url !== undefined ? '--url' : CLIENT_URL_ENV;
  const url = serverUrlOf(raw, from, `give the API token with --token or ${CLIENT_TOKEN_ENVS[0]}`);
  if (url.search || url.hash) throw new ConfigError(`${from} must not carry a query or fragment`);

  const token = flags.token ?? firstEnv(CLIENT_TOKEN_ENVS, env);
  if (token === undefined && opts.tokenRequired) throw new ConfigError(`give an API token with --token or ${CLIENT_TOKEN_ENVS[0]}`);
  if (token !== undefined && !/^[\x21-\x7E]+$/.test(token)) throw new ConfigError('the API token must be printable ASCII without spaces');
  return { baseUrl: url.href.replace(/\/+$/, ''), token };
}
