import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsScrape } from '../http/routes/metrics-routes.js';
import type { Log } from '../lib/log.js';

/** A listening `/metrics` server (`metrics_port`). */
export interface MetricsServer {
  /** Where it listens, e.g. `http://127.0.0.1:9464` (the port chosen when 0 was asked). */
  readonly url: string;
  close(): Promise<void>;
}

/** A scrape that has not started answering by then is cut: the listener is for scrapers only. */
const REQUEST_TIMEOUT_MS = 10_000;

function answerJson(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify({ error }));
}

/**
 * The metrics on a port of their own, without a token: for a scraper on a private network, and
 * for `worker` processes, which have no API listener. A bare node:http server answering `GET
 * /metrics` (its query string ignored) and nothing else: no Fastify, no API routes, no auth.
 */
export async function listenMetrics(scrape: () => Promise<MetricsScrape>, host: string, port: number, log?: Log): Promise<MetricsServer> {
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return answerJson(res, 404, 'not found: this port serves GET /metrics only');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answerJson(res, 405, `method ${req.method ?? ''} not allowed on /metrics; use GET`, { allow: 'GET, HEAD' });
    scrape().then(
      (s) => {
        res.writeHead(200, { 'content-type': s.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : s.body);
      },
      () => answerJson(res, 500, 'the metrics could not be collected'),
    );
  };
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      // Errors after listening (accept failing with EMFILE, say) are logged: without a listener
      // they would end the process.
      server.on('error', (err: NodeJS.ErrnoException) => log?.warn({ code: err.code }, 'metrics server error'));
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shown}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
