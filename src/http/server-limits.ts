import type { Server } from 'node:http';
import type { FastifyBaseLogger, FastifyHttpOptions } from 'fastify';
import { DEFAULTS } from '../config/options.js';
import type { Clock } from '../lib/clock.js';

/**
 * What one client may hold of the server: how long it may take to send a request, how long an idle
 * connection stays open, and how many connections there are at most. Without these a client that
 * sends a body one byte at a time keeps its socket (and a file descriptor) forever; a few hundred
 * such clients take the process down. docs/config.md lists the settings and their defaults.
 */
export interface ServerLimits {
  /** Headers and body must have arrived this long after the request started; else 408 and close. */
  readonly requestTimeoutMs: number;
  /** The headers must have arrived this long after the request started (capped at requestTimeoutMs). */
  readonly headersTimeoutMs: number;
  /** An idle kept-alive connection is closed after this long. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at most; more are closed as soon as they are accepted. Lingering ones count. */
  readonly maxConnections: number;
  /** After an answer sent before the request's body arrived: how long the rest is read and dropped (lingering-close.ts). */
  readonly lingerMs: number;
  /** ... and how many bytes of it at most. */
  readonly lingerBytes: number;
}

/** The defaults of docs/config.md, for callers (tests) that do not read a config. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  requestTimeoutMs: DEFAULTS.request_timeout_ms,
  headersTimeoutMs: DEFAULTS.headers_timeout_ms,
  keepAliveTimeoutMs: DEFAULTS.keep_alive_timeout_ms,
  maxConnections: DEFAULTS.max_connections,
  lingerMs: DEFAULTS.linger_timeout_ms,
  lingerBytes: DEFAULTS.linger_max_bytes,
};

/**
 * Node checks the header and request timeouts only every `connectionsCheckingInterval` (30 s by
 * default), so a request could outlive its timeout by that much. A quarter of the shortest timeout,
 * within 25 ms..1 s, cuts a slow client promptly; the check walks only incomplete requests.
 */
export function checkingIntervalMs(limits: ServerLimits): number {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return Math.max(25, Math.min(1000, Math.floor(shortest / 4)));
}

/** The Fastify (and, through `http`, Node http.Server) options that carry the limits. */
export function serverOptions(limits: ServerLimits): Pick<FastifyHttpOptions<Server>, 'requestTimeout' | 'keepAliveTimeout' | 'http'> {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      // Node refuses a headers timeout above the request timeout; the request timeout wins.
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      connectionsCheckingInterval: checkingIntervalMs(limits),
    },
  };
}

/**
 * The connection cap. Node accepts and at once closes a connection over `maxConnections`, before
 * any byte is read, so refusing costs nothing but the accept; the process keeps serving the
 * connections it has. A refusal is logged, at most once per `logEveryMs`, so a flood does not
 * flood the log too.
 */
export function applyConnectionCap(
  server: Server,
  limits: ServerLimits,
  log: FastifyBaseLogger | undefined,
  clock: Clock,
  logEveryMs = 10_000,
): void {
  server.maxConnections = limits.maxConnections;
  let lastLogged = -Infinity;
  let dropped = 0;
  server.on('drop', () => {
    dropped++;
    const now = clock.nowMs();
    if (!log || now - lastLogged < logEveryMs) return;
    log.warn({ maxConnections: limits.maxConnections, dropped }, 'connection cap reached: closed new connections');
    lastLogged = now;
    dropped = 0;
  });
}
