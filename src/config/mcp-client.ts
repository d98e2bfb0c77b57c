import { ConfigError } from './config.js';
import { firstEnv, serverUrlOf } from './readers.js';

/** Where `mediagen mcp` finds its server and token when no flag gives them. */
export const MCP_URL_ENV = 'MEDIAGEN_URL';
/**
 * The token variables, first set one wins: MEDIAGEN_TOKEN, then MEDIAGEN_API_TOKEN. The client package
 * (packages/client, which cannot import the server) reads the same ones; test/client/cli-settings.test.ts
 * holds the two lists equal.
 */
export const MCP_TOKEN_ENVS = ['MEDIAGEN_TOKEN', 'MEDIAGEN_API_TOKEN'] as const;

export interface McpClientSettings {
  /** The server's MCP endpoint: `<base URL>/mcp`. */
  readonly endpoint: URL;
  readonly token: string;
}

/**
 * The base URL the server is reached at, with its path prefix (`https://host/api`), or its /mcp
 * endpoint itself; the endpoint either way.
 */
function endpointOf(raw: string, from: string): URL {
  const url = serverUrlOf(raw, from, `give the API token with --token or ${MCP_TOKEN_ENVS[0]}`);
  url.search = '';
  url.hash = '';
  if (!/\/mcp\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/mcp`;
  return url;
}

/**
 * `mediagen mcp`'s settings: flags first, then MEDIAGEN_URL and MEDIAGEN_TOKEN (or MEDIAGEN_API_TOKEN),
 * as the client commands read them. The token is better given by environment: a flag shows in the
 * process list.
 */
export function mcpClientSettings(flags: { url?: string | undefined; token?: string | undefined }, env: Readonly<Record<string, string | undefined>> = process.env): McpClientSettings {
  const url = flags.url ?? env[MCP_URL_ENV];
  if (!url) throw new ConfigError(`give the mediagen server's URL with --url or ${MCP_URL_ENV}`);
  const token = flags.token ?? firstEnv(MCP_TOKEN_ENVS, env);
  if (!token) throw new ConfigError(`give an API token with --token or ${MCP_TOKEN_ENVS[0]}`);
  if (!/^[\x21-\x7E]+$/.test(token)) throw new ConfigError('the API token must be printable ASCII without spaces');
  return { endpoint: endpointOf(url, flags.url !== undefined ? '--url' : MCP_URL_ENV), token };
}
