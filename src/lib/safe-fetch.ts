import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import type { Dispatcher } from 'undici';
import { classifyAddress, isPublicAddress } from './address-policy.js';
import { formatBytes } from './data-uri.js';

/**
 * Fetching of URLs that clients chose (job inputs, later webhooks) without letting them reach the
 * server's own network (SSRF). Addresses are checked where the socket is opened, after DNS and
 * for the very addresses the socket then connects to, so a name that resolves to a public address
 * when validated and to 127.0.0.1 when connected (DNS rebinding) cannot slip through, and every
 * redirect hop is checked the same way.
 */

export type FetchErrorReason =
  | 'refused_address'
  | 'bad_url'
  | 'timeout'
  | 'too_large'
  | 'http_status'
  | 'too_many_redirects'
  | 'network'
  | 'aborted';

/** A failed fetch. The message can be shown to the client: it names the host, never the full URL. */
export class FetchError extends Error {
  override readonly name = 'FetchError';

  /** With `http_status`: the status answered, and its Retry-After header as sent. */
  readonly status: number | undefined;
  readonly retryAfter: string | undefined;

  constructor(
    readonly reason: FetchErrorReason,
    message: string,
    options?: ErrorOptions & { readonly status?: number; readonly retryAfter?: string },
  ) {
    super(message, options);
    this.status = options?.status;
    this.retryAfter = options?.retryAfter;
  }
}

/** Resolves a host name to every address it has, like dns.lookup with `all: true`. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export interface GuardedDispatcherOptions {
  /** Connect to any address at all (`--allow-private-urls`). */
  readonly allowPrivate: boolean;
  /** The address policy; tests inject one. Default isPublicAddress. */
  readonly isAllowed?: (address: string) => boolean;
  /** Name resolution; tests inject one. Default dns.lookup (the system resolver, /etc/hosts). */
  readonly resolve?: Resolver;
}

const systemResolve: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

function refusal(host: string, address: string): FetchError {
  const what = classifyAddress(address)?.what ?? 'not an allowed address';
  const subject = host === address ? `${address} is` : `${host} resolves to ${address},`;
  return new FetchError('refused_address', `refused: ${subject} ${what}`);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

// Dispatchers made here; fetchInput takes no other, so a plain Agent cannot skip the checks.
const guarded = new WeakSet<Dispatcher>();

/**
 * An undici Agent that connects only to addresses the policy allows. IP-literal hosts are checked
 * before connecting; names are resolved by a `lookup` handed to net/tls.connect, which refuses
 * the name if ANY of its addresses is refused and otherwise returns exactly the checked addresses
 * for the socket to connect to. Close it (`close()`/`destroy()`) when done.
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  const isAllowed = options.allowPrivate ? () => true : (options.isAllowed ?? isPublicAddress);
  const resolve = options.resolve ?? systemResolve;

  const lookup = (hostname: string, opts: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (found) => {
        // Every address is checked, not only those of the family asked for.
        const refused = found.find((a) => !isAllowed(a.address));
        if (refused) return callback(refusal(hostname, refused.address), []);
        const addresses = found.filter((a) => !opts.family || a.family === opts.family);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
        if (opts.all) callback(null, [...addresses]);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };

  const base = buildConnector({ lookup });
  const connect: buildConnector.connector = (opts, callback) => {
    // net.connect does not call `lookup` for IP literals, so they are checked here.
    if (isIP(opts.hostname) && !isAllowed(opts.hostname)) {
      callback(refusal(opts.hostname, opts.hostname), null);
      return;
    }
    base(opts, callback);
  };

  const agent = new Agent({ connect });
  guarded.add(agent);
  return agent;
}

/** Whether `dispatcher` was made by createGuardedDispatcher, so its connections are checked. */
export function isGuardedDispatcher(dispatcher: Dispatcher): boolean {
  return guarded.has(dispatcher);
}

export interface FetchInputOptions {
  /** Used to make a one-off guarded dispatcher when `dispatcher` is not given. */
  readonly allowPrivate: boolean;
  readonly maxBytes: number;
  /** Covers the whole fetch: every hop's connect, headers and body. */
  readonly timeoutMs: number;
  readonly maxRedirects?: number;
  readonly signal?: AbortSignal;
  /** From createGuardedDispatcher, to reuse connections; its policy then decides, not allowPrivate. */
  readonly dispatcher?: Dispatcher;
}

export interface FetchedInput {
  readonly data: Buffer;
  /** The Content-Type header as sent, if any. */
  readonly contentType: string | null;
  /** The URL after redirects. */
  readonly finalUrl: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Checks a URL a client gave (or a server redirected to). Credentials in URLs are refused: they
 * would be sent to whoever the URL names and kept in job inputs and logs, and `user@host` forms
 * are a classic way to make a URL look like it goes somewhere else.
 */
function checkUrl(raw: string, redirectedFrom?: URL): URL {
  const via = redirectedFrom ? ` (redirect from ${redirectedFrom.host})` : '';
  let url: URL;
  try {
    // A redirect's Location may be relative to the URL that sent it.
    url = new URL(raw, redirectedFrom);
  } catch {
    throw new FetchError('bad_url', `not a valid URL${via}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('bad_url', `unsupported URL scheme "${url.protocol}"${via}; only http and https URLs are fetched`);
  }
  if (url.username || url.password) {
    throw new FetchError('bad_url', `URLs with credentials are not fetched (${url.host})${via}`);
  }
  return url;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | null {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const NETWORK_CAUSES: Readonly<Record<string, string>> = {
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed unexpectedly',
};

/** An undici or socket error as a FetchError; only the code goes in the message, the rest in `cause`. */
function asNetworkError(err: unknown, host: string, timeoutMs: number): FetchError {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return timeoutError(host, timeoutMs, err);
  const cause = typeof code === 'string' ? (NETWORK_CAUSES[code] ?? code) : 'network error';
  return new FetchError('network', `could not fetch from ${host}: ${cause}`, { cause: err });
}

function timeoutError(host: string, timeoutMs: number, cause?: unknown): FetchError {
  return new FetchError('timeout', `timed out after ${timeoutMs} ms fetching from ${host}`, { cause });
}

/**
 * Drops a response body we will not read, closing its connection. undici then emits an abort
 * error on the stream; with nobody reading, that error is expected and must not go uncaught.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {}).destroy();
}

async function readBody(body: Dispatcher.ResponseData['body'], maxBytes: number, host: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop by throwing ends the iterator, which destroys the stream and its socket.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw new FetchError('too_large', `the input from ${host} is larger than ${formatBytes(maxBytes)}`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/**
 * GETs an http(s) URL under the address policy, following up to `maxRedirects` redirects by hand
 * so that each hop's URL is checked again (and its address, at connect time). Throws FetchError.
 */
export async function fetchInput(url: string, options: FetchInputOptions): Promise<FetchedInput> {
  const { maxBytes, timeoutMs, maxRedirects = 5, signal } = options;
  if (options.dispatcher && !guarded.has(options.dispatcher)) {
    throw new TypeError('fetchInput takes only a dispatcher made by createGuardedDispatcher');
  }
  let current = checkUrl(url);
  if (signal?.aborted) throw new FetchError('aborted', `fetching from ${current.host} was aborted`);

  const own = options.dispatcher ? null : createGuardedDispatcher({ allowPrivate: options.allowPrivate });
  const dispatcher = options.dispatcher ?? own!;
  // One controller for the whole fetch; its reason tells a timeout from an outside abort.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timeoutError(current.host, timeoutMs)), timeoutMs);
  const onAbort = () => controller.abort(new FetchError('aborted', `fetching from ${current.host} was aborted`));
  signal?.addEventListener('abort', onAbort, { once: true });
  let redirectedFrom: string | null = null;

  try {
    for (let redirects = 0; ; redirects++) {
      const res = await request(current, {
        method: 'GET',
        dispatcher,
        signal: controller.signal,
        headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'mediagen' },
      });
      try {
        const host = current.host;
        if (REDIRECTS.has(res.statusCode)) {
          const location = header(res.headers, 'location');
          if (location === null) throw new FetchError('http_status', `HTTP ${res.statusCode} from ${host} without a Location`);
          if (redirects >= maxRedirects) throw new FetchError('too_many_redirects', `more than ${maxRedirects} redirects from ${host}`);
          discard(res.body);
          current = checkUrl(location, current);
          redirectedFrom = host;
          continue;
        }
        if (res.statusCode < 200 || res.statusCode > 299) {
          const retryAfter = header(res.headers, 'retry-after');
          throw new FetchError('http_status', `HTTP ${res.statusCode} from ${host}`, { status: res.statusCode, ...(retryAfter === null ? {} : { retryAfter }) });
        }
        const length = Number(header(res.headers, 'content-length') ?? NaN);
        if (length > maxBytes) throw new FetchError('too_large', `the input from ${host} is larger than ${formatBytes(maxBytes)}`);
        const data = await readBody(res.body, maxBytes, host);
        return { data, contentType: header(res.headers, 'content-type'), finalUrl: current.href };
      } catch (err) {
        discard(res.body);
        throw err;
      }
    }
  } catch (err) {
    // An abort surfaces as the controller's reason, or as undici's own error when it wins the race.
    if (controller.signal.aborted && controller.signal.reason instanceof FetchError) throw controller.signal.reason;
    if (err instanceof FetchError && err.reason === 'refused_address' && redirectedFrom) {
      throw new FetchError(err.reason, `${err.message} (redirect from ${redirectedFrom})`);
    }
    if (err instanceof FetchError) throw err;
    throw asNetworkError(err, current.host, timeoutMs);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    await own?.destroy();
  }
}
