import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  readonly url: string;
  /** Calls `fn` with the delivered job's id and `performance.now()` at the end of each delivery's body. */
  onDelivery(fn: ((jobId: string, at: number) => void) | undefined): void;
  close(): Promise<void>;
}

/** A loopback webhook receiver that answers 204 at once (no signature check: not what is timed). */
export async function startReceiver(): Promise<Receiver> {
  let listener: ((jobId: string, at: number) => void) | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(204).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { job_id?: string; data?: { job_id?: string } };
        const id = body.job_id ?? body.data?.job_id;
        if (id) listener?.(id, at);
      } catch {
        // Not a delivery the bench made.
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    onDelivery(fn) {
      listener = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
