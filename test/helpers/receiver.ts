import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A webhook receiver on loopback that records every request and answers with the next scripted
 * status (then 200 once the script is used up).
 */
export class Receiver {
  readonly received: ReceivedWebhook[] = [];
  /** Statuses to answer with, in order; headers per status are optional. */
  script: Array<number | { status: number; headers: Record<string, string> }> = [];
  /** Requests to this path get no answer until release() (a slow receiver). */
  holdPath: string | undefined;
  readonly #held: Array<() => void> = [];
  #server: Server | undefined;
  url = '';

  async start(port = 0): Promise<this> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = () => {
          const next = this.script.shift() ?? 200;
          const { status, headers } = typeof next === 'number' ? { status: next, headers: {} } : next;
          res.writeHead(status, headers).end();
        };
        if (req.url === this.holdPath) this.#held.push(answer);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Answers every held request. */
  release(): void {
    for (const answer of this.#held.splice(0)) answer();
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
