/**
 * Where the client commands (`generate|jobs|assets|models|usage`) find their server and token:
 * `--url` and `--token` first, then MEDIAGEN_URL and MEDIAGEN_TOKEN (or MEDIAGEN_API_TOKEN, the
 * name `mediagen mcp` reads). The package cannot import the server's config readers, so the URL
 * rules (absolute http(s), no credentials) are restated here; test/client/cli-settings.test.ts
 * holds them equal to the server's `mediagen mcp` reading.
 */
export const CLIENT_URL_ENV = 'MEDIAGEN_URL';
/** The token variables, first found wins: MEDIAGEN_TOKEN, then `mediagen mcp`'s MEDIAGEN_API_TOKEN. */
export const CLIENT_TOKEN_ENVS = ['MEDIAGEN_TOKEN', 'MEDIAGEN_API_TOKEN'] as const;

/** A setting of the command line or environment that cannot be used (exit status 2). */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

export interface ClientSettings {
  /** The server's base URL, with its path prefix if it has one. */
  readonly baseUrl: string;
  /** Absent only where the command may go without (`models`). */
  readonly token: string | undefined;
}

/** A URL as an error may show it: credentials masked, at most 200 characters. */
function shownUrl(raw: string): string {
  return JSON.stringify(raw.replace(/^([a-z][a-z0-9+.-]*:\/*)?.*@/is, (_all, scheme: string | undefined) => `${scheme ?? ''}***@`).slice(0, 200));
}

export function clientSettings(
  flags: { url?: string | undefined; token?: string | undefined },
  opts: { tokenRequired: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ClientSettings {
  const raw = flags.url ?? env[CLIENT_URL_ENV];
  if (!raw) throw new SettingsError(`give the mediagen server's URL with --url or ${CLIENT_URL_ENV}`);
  const from = flags.url !== undefined ? '--url' : CLIENT_URL_ENV;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingsError(`${from} must be an absolute http(s) URL such as http://localhost:8080, got ${shownUrl(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SettingsError(`${from} must be an http(s) URL, got '${url.protocol}'`);
  if (url.username || url.password) throw new SettingsError(`${from} must not carry credentials; give the API token with --token or ${CLIENT_TOKEN_ENVS[0]}`);
  if (url.search || url.hash) throw new SettingsError(`${from} must not carry a query or fragment`);

  const token = flags.token ?? CLIENT_TOKEN_ENVS.map((name) => env[name]).find((v) => v !== undefined && v !== '');
  if (token === undefined && opts.tokenRequired) throw new SettingsError(`give an API token with --token or ${CLIENT_TOKEN_ENVS[0]}`);
  if (token !== undefined && !/^[\x21-\x7E]+$/.test(token)) throw new SettingsError('the API token must be printable ASCII without spaces');
  return { baseUrl: url.href.replace(/\/+$/, ''), token };
}
