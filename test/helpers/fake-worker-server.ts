import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake server saw. */
export interface SeenCall {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  /** Parsed JSON for JSON bodies, else undefined. */
  readonly json: Record<string, unknown> | undefined;
  readonly bytes: Buffer;
}

export type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Buffer;
export type Handler = (call: SeenCall) => Answer | undefined | Promise<Answer | undefined>;

/**
 * A stand-in for the server side of /worker/v1 (the contract in docs/workers.md), for the remote
 * worker's unit tests: it hands out queued jobs to claims (long-polling until one is queued or
 * wait_ms passes), extends leases on progress, keeps uploads, and records every call. `handle`
 * overrides the answer to any call.
 */
export class FakeWorkerServer {
  readonly calls: SeenCall[] = [];
  readonly uploads = new Map<string, Buffer>();
  readonly queue: Record<string, unknown>[] = [];
  /** Lease length answered by progress. */
  leaseMs = 30_000;
  /** Overrides: the first that answers wins. */
  handle: Handler | undefined;
  token = 'mgw_test';
  url = '';
  #server: Server | undefined;
  readonly #waiting = new Set<() => void>();

  async start(): Promise<this> {
    this.#server = createServer((req, res) => void this.#serve(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Queues a job for the next claim; fields not given get plausible values. */
  enqueue(job: Partial<Record<string, unknown>> & { id: string }): void {
    this.queue.push({
      model: 'image/test/model',
      request: {},
      attempt: 1,
      lease_id: `lease-${job.id}`,
      lease_expires_at: new Date(Date.now() + this.leaseMs).toISOString(),
      deadline: new Date(Date.now() + 600_000).toISOString(),
      inputs: {},
      styles: {},
      upload_url: `${this.url}/worker/v1/jobs/${job.id}/outputs/`,
      ...job,
    });
    for (const wake of this.#waiting) wake();
  }

  /** Calls to one route of a job (`progress`, `complete`, `fail`), or claims. */
  seen(action: string, jobId?: string): SeenCall[] {
    return this.calls.filter((c) => (jobId === undefined ? c.path.endsWith(`/${action}`) : c.path === `/worker/v1/jobs/${jobId}/${action}`));
  }

  async close(): Promise<void> {
    for (const wake of this.#waiting) wake();
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://x');
    const contentType = req.headers['content-type'];
    let json: Record<string, unknown> | undefined;
    if (contentType === 'application/json') json = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    const call: SeenCall = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: req.headers.authorization, contentType, json, bytes };
    this.calls.push(call);
    const answer = (await this.handle?.(call)) ?? (await this.#default(call, req));
    if (Buffer.isBuffer(answer)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': answer.length }).end(answer);
      return;
    }
    const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(body);
  }

  async #default(call: SeenCall, req: IncomingMessage): Promise<Answer> {
    const isInput = /^\/worker\/v1\/jobs\/[^/]+\/inputs\//.test(call.path);
    if (!isInput && call.authorization !== `Bearer ${this.token}`) return { status: 401, body: { error: 'unknown worker token' } };
    if (call.path === '/worker/v1/claim') return this.#claim(call, req);
    const m = /^\/worker\/v1\/jobs\/([^/]+)\/(progress|complete|fail|outputs)(?:\/(.+))?$/.exec(call.path);
    if (!m) return { status: 404, body: { error: 'no such route' } };
    const [, , action, name] = m;
    if (action === 'outputs') {
      this.uploads.set(decodeURIComponent(name!), call.bytes);
      return { status: 201, body: { name: decodeURIComponent(name!), size: call.bytes.length, content_type: call.contentType } };
    }
    if (action === 'progress') return { status: 200, body: { lease_expires_at: new Date(Date.now() + this.leaseMs).toISOString(), status: call.json?.status ?? 'sampling' } };
    if (action === 'complete') return { status: 200, body: { status: 'completed' } };
    return { status: 200, body: { status: call.json?.retryable ? 'queued' : 'failed' } };
  }

  async #claim(call: SeenCall, req: IncomingMessage): Promise<Answer> {
    const max = Number(call.json?.max ?? 1);
    const waitMs = Number(call.json?.wait_ms ?? 20_000);
    if (this.queue.length === 0 && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#waiting.delete(done);
          req.socket.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        this.#waiting.add(done);
        req.socket.once('close', done);
      });
    }
    return { status: 200, body: { jobs: this.queue.splice(0, max) } };
  }
}
