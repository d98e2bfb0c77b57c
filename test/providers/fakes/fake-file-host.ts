/**
 * A provider's file host on loopback, apart from its API, as the providers have one:
 * - Replicate: a prediction's `output` names files on `replicate.delivery`, not on
 *   `api.replicate.com` (the prediction examples of https://replicate.com/docs/reference/http);
 * - fal: results and uploads name files on its CDN (`https://v3.fal.media/files/...`: the
 *   `file_url` fal-ai/fal-js libs/client/src/storage.ts returns; the queue docs' example outputs);
 * - OpenAI: a `url` answer (dall-e, `response_format: url`) points at Azure blob storage, "only
 *   valid for 60 minutes" (https://platform.openai.com/docs/api-reference/images/create).
 * So outputs pass through the address guard (they are on no configured origin). It listens on
 * 127.0.0.2, another loopback address than the APIs' 127.0.0.1, and can fail the way a CDN does
 * for a moment: answer 503 (or any status) to the next downloads, or hold them unanswered.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFileHost {
  /** `http://127.0.0.2:<port>`. */
  readonly url: string;
  /** Paths GET asked for, in order (whatever the answer). */
  readonly requests: string[];
  /** Serves `bytes` at `${url}${path}`. */
  serve(path: string, bytes: Buffer, contentType?: string): string;
  /** The next `n` downloads answer `status` (503 by default), with these headers (a Retry-After). */
  fail(n: number, status?: number, headers?: Record<string, string>): void;
  /** Drops the failures not answered yet. */
  heal(): void;
  /** Holds every download unanswered until `release()` (a stalled CDN; a worker stopped mid-download). */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startFakeFileHost(): Promise<FakeFileHost> {
  const files = new Map<string, { bytes: Buffer; type: string }>();
  const faults: { status: number; headers: Record<string, string> }[] = [];
  let held: Array<() => void> | undefined;

  const server = createServer((req, res) => {
    void (async () => {
      const u = new URL(req.url ?? '/', 'http://files');
      host.requests.push(u.pathname);
      if (held) await new Promise<void>((resolve) => held?.push(resolve) ?? resolve());
      if (res.destroyed) return;
      const fault = faults.shift();
      if (fault) return void res.writeHead(fault.status, { 'content-type': 'text/html', ...fault.headers }).end('<html>Service Unavailable</html>');
      if (req.method === 'GET' && u.pathname === '/big.png') {
        // A PNG signature, then zeros up to ?bytes= (an oversized output for the download cap).
        const size = Math.max(64, Number(u.searchParams.get('bytes') ?? 0));
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(size) });
        res.write(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
        const chunk = Buffer.alloc(64 * 1024);
        for (let left = size - 8; left > 0 && !res.destroyed; left -= chunk.length) {
          if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => res.once('drain', r));
        }
        return void res.end();
      }
      const file = req.method === 'GET' ? files.get(u.pathname) : undefined;
      if (!file) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length }).end(file.bytes);
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.2');
  await once(server, 'listening');

  const host: FakeFileHost = {
    url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`,
    requests: [],
    serve(path, bytes, contentType = 'image/png') {
      files.set(path, { bytes, type: contentType });
      return `${host.url}${path}`;
    },
    fail(n, status = 503, headers = {}) {
      for (let i = 0; i < n; i++) faults.push({ status, headers });
    },
    heal() {
      faults.length = 0;
    },
    hold() {
      held ??= [];
    },
    release() {
      const waiting = held ?? [];
      held = undefined;
      for (const go of waiting) go();
    },
    async close() {
      host.release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return host;
}
