/**
 * A tiny local HTTP server whose every answer a test scripts, for what a real mediagen server
 * cannot be made to do on demand: a 429 or 503 with a given Retry-After, a connection dropped
 * mid-request, an event stream cut between events.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** Date.now() when the request's body had arrived. */
  readonly at: number;
}

export type Handler = (req: Seen, res: ServerResponse, n: number) => void;

export interface Stub {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

/** Starts a stub on a free loopback port; `handle` answers request number `n` (0-based). */
export async function startStub(handle: Handler): Promise<Stub> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      seen.push(entry);
      handle(entry, res, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Drops the connection without an answer: the client sees a network error. */
export function drop(res: ServerResponse): void {
  res.socket?.destroy();
}

export const job = (status: string, extra: Record<string, unknown> = {}) => ({
  job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  type: 'image/vendor-a/model-a-2/medium',
  status,
  created_at: '2026-11-22T12:00:00.000000Z',
  ...extra,
});
