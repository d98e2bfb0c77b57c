/**
 * A fake fal on loopback, written from fal's public documentation and client:
 * - queue: https://docs.fal.ai/model-apis/model-endpoints/queue,
 *   https://docs.fal.ai/documentation/model-apis/inference/queue (submit answer with request_id,
 *   status_url, response_url, cancel_url; statuses IN_QUEUE, IN_PROGRESS, COMPLETED; queue_position;
 *   metrics.inference_time), https://fal.ai/docs/inference-api/queue/cancel (PUT; 202
 *   CANCELLATION_REQUESTED, 400 ALREADY_COMPLETED), request errors as `{detail, error_type}`
 *   (https://docs.fal.ai/documentation/model-apis/request-errors); the request URLs on the app id
 *   without the endpoint's subpath (fal-ai/fal-js libs/client/src/queue.ts, utils.ts parseEndpointId);
 * - storage: fal-ai/fal-js libs/client/src/storage.ts (`POST /storage/upload/initiate` with
 *   `{content_type, file_name}` answering `{upload_url, file_url}`, then `PUT upload_url`);
 * - webhooks: https://docs.fal.ai/model-endpoints/webhooks (the `fal_webhook` query parameter;
 *   body `{request_id, gateway_request_id, status: OK | ERROR, payload, error?}`; ED25519 over
 *   request id, user id, timestamp and the body's sha256 hex joined by newlines, hex in
 *   X-Fal-Webhook-Signature; keys as a JWKS at /.well-known/jwks.json).
 * Each on its own host, as on fal: the queue (`url`, queue.fal.run) with the JWKS; storage
 * (`storageUrl`, fal's REST host: upload initiate, and the presigned PUT); files on the CDN
 * (`fileHost`, fake-file-host.ts on another loopback address, as v3.fal.media): uploaded files,
 * the default output PNG (`/outputs/image.png`, 8x8) and an oversized one (`/big.png?bytes=N`).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { startFakeFileHost } from './fake-file-host.js';
import type { FakeFileHost } from './fake-file-host.js';

export interface FakeFalCall {
  readonly method: string;
  /** The path with its query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** JSON bodies parsed; anything else as a Buffer (uploads); undefined when empty. */
  readonly body: unknown;
}

export interface FakeFalRequest {
  readonly id: string;
  /** The endpoint id submitted to (`fal-ai/flux/dev`) and the app id its URLs use (`fal-ai/flux`). */
  readonly endpoint: string;
  readonly appId: string;
  readonly input: unknown;
  /** The `fal_webhook` query parameter of the submission, if any. */
  readonly webhook: string | undefined;
  /** Index into `statuses`; each status poll moves it one step (unless held). */
  step: number;
  held: boolean;
  cancelled: boolean;
  /** Set to fail this request provider-side. */
  failure: string | undefined;
  /** Whether its completion webhook went out. */
  notified: boolean;
}

/** How the next calls answer instead of normally. */
export type FakeFalFault = { readonly status: number; readonly retryAfter?: string; readonly detail?: string } | { readonly malformed: true };

export interface FakeFalOptions {
  /** The statuses a request goes through, one per status poll; the last one stays. Default IN_QUEUE, IN_PROGRESS, COMPLETED. */
  readonly statuses?: readonly ('IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED')[];
  /** Keep every new request IN_PROGRESS until `release` (default false). */
  readonly hold?: boolean;
  /** The result of every request (default: one image, the fake's own PNG). A function gets the fake's URL. */
  readonly output?: unknown | ((url: string) => unknown);
  /** Leave the URLs out of the submit answer, as fal's older answers did (default false). */
  readonly bareSubmitAnswer?: boolean;
  /** Whether a failed request's COMPLETED status carries `error` (default true); the response URL answers 422 either way. */
  readonly errorOnStatus?: boolean;
  /** Send a signed webhook to `fal_webhook` when a request completes (default true). */
  readonly webhooks?: boolean;
}

export interface FakeFal {
  /** The queue API (and the JWKS). */
  readonly url: string;
  /** fal's storage API: its own host. */
  readonly storageUrl: string;
  /** fal's CDN: outputs and uploaded files, on another loopback address. */
  readonly fileHost: FakeFileHost;
  readonly calls: FakeFalCall[];
  readonly requests: Map<string, FakeFalRequest>;
  /** Request ids whose cancel_url was called. */
  readonly cancels: string[];
  /** Uploaded files by path (`/files/<n>`). */
  readonly files: Map<string, { bytes: Buffer; contentType: string }>;
  /** Webhook deliveries made: where, the answer's status, and what was sent. */
  readonly webhooks: { url: string; status: number; headers: Record<string, string>; body: string }[];
  readonly png: Buffer;
  readonly userId: string;
  submissions(): number;
  /** The next `count` queue/storage calls answer `fault` (429 with Retry-After, 500, 4xx with detail, or a non-JSON body). */
  failNext(count: number, fault: FakeFalFault): void;
  /** Fail a request (or, without id, every later one) provider-side with `message`. */
  failJob(message: string, id?: string): void;
  /** Let a held request (or all) move on to COMPLETED at the next poll. */
  release(id?: string): void;
  /** Complete a request now, sending its webhook if it asked for one; answers the delivery's status. */
  complete(id: string): Promise<number | undefined>;
  setOutput(output: unknown): void;
  /** A webhook for a request, signed (or forged) as fal would send it: to feed verifyWebhook directly. */
  webhookFor(id: string, forge?: 'signature' | 'stale' | 'tampered' | 'other-key', nowMs?: number): { headers: Record<string, string>; body: string };
  /** POST a (possibly forged) webhook to the request's `fal_webhook` URL; answers the HTTP status. */
  sendWebhook(id: string, forge?: 'signature' | 'stale' | 'tampered' | 'other-key'): Promise<number>;
  close(): Promise<void>;
}

const NAMESPACES = new Set(['workflows', 'comfy']);

function appIdOf(endpoint: string): string {
  const parts = endpoint.split('/');
  return NAMESPACES.has(parts[0]!) ? parts.slice(0, 3).join('/') : parts.slice(0, 2).join('/');
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeFal(options: FakeFalOptions = {}): Promise<FakeFal> {
  const statuses = options.statuses ?? ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED'];
  const keys = generateKeyPairSync('ed25519');
  const otherKeys = generateKeyPairSync('ed25519');
  const jwk = { ...keys.publicKey.export({ format: 'jwk' }), kid: 'fake-1', alg: 'EdDSA', use: 'sig' };
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3060c0' } }).png().toBuffer();
  const faults: FakeFalFault[] = [];
  let failAll: string | undefined;
  let output: unknown = options.output;
  let uploads = 0;
  let url = '';
  let storageUrl = '';
  const fileHost = await startFakeFileHost();
  fileHost.serve('/outputs/image.png', png);

  const fake: FakeFal = {
    url: '',
    storageUrl: '',
    fileHost,
    calls: [],
    requests: new Map(),
    cancels: [],
    files: new Map(),
    webhooks: [],
    png,
    userId: 'fake-user-1',
    submissions: () => fake.requests.size,
    failNext: (count, fault) => {
      for (let i = 0; i < count; i++) faults.push(fault);
    },
    failJob: (message, id) => {
      if (id === undefined) failAll = message;
      else fake.requests.get(id)!.failure = message;
    },
    release: (id) => {
      for (const r of fake.requests.values()) if (id === undefined || r.id === id) r.held = false;
    },
    complete: async (id) => {
      const r = fake.requests.get(id)!;
      r.held = false;
      r.step = statuses.length - 1;
      return finished(r);
    },
    setOutput: (o) => {
      output = o;
    },
    webhookFor: (id, forge, nowMs = Date.now()) => {
      const r = fake.requests.get(id)!;
      const body = JSON.stringify(r.failure === undefined
        ? { request_id: id, gateway_request_id: id, status: 'OK', payload: result() }
        : { request_id: id, gateway_request_id: id, status: 'ERROR', error: 'Invalid status code: 422', payload: { detail: [{ msg: r.failure, type: 'value_error' }] } });
      const ts = String(Math.floor(nowMs / 1000) - (forge === 'stale' ? 600 : 0));
      const message = [id, fake.userId, ts, createHash('sha256').update(body).digest('hex')].join('\n');
      const signature = sign(null, Buffer.from(message), forge === 'other-key' ? otherKeys.privateKey : keys.privateKey).toString('hex');
      const headers = {
        'content-type': 'application/json',
        'x-fal-webhook-request-id': id,
        'x-fal-webhook-user-id': fake.userId,
        'x-fal-webhook-timestamp': ts,
        'x-fal-webhook-signature': forge === 'signature' ? `${signature.slice(0, -2)}${signature.endsWith('00') ? '01' : '00'}` : signature,
      };
      return { headers, body: forge === 'tampered' ? body.replace(id, `${id.slice(0, -1)}x`) : body };
    },
    sendWebhook: async (id, forge) => {
      const r = fake.requests.get(id)!;
      if (!r.webhook) throw new Error(`request ${id} gave no fal_webhook`);
      const { headers, body } = fake.webhookFor(id, forge);
      const res = await fetch(r.webhook, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      fake.webhooks.push({ url: r.webhook, status: res.status, headers, body });
      return res.status;
    },
    close: () => new Promise<void>((resolve) => {
      storage.closeAllConnections();
      storage.close();
      void fileHost.close();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  function result(): unknown {
    if (typeof output === 'function') return (output as (u: string) => unknown)(url);
    return output ?? { images: [{ url: `${fileHost.url}/outputs/image.png`, content_type: 'image/png', file_name: 'image.png', width: 8, height: 8 }], seed: 42 };
  }

  function status(r: FakeFalRequest): string {
    if (r.cancelled) return 'COMPLETED';
    return statuses[Math.min(r.step, statuses.length - 1)]!;
  }

  async function finished(r: FakeFalRequest): Promise<number | undefined> {
    if (!r.webhook || options.webhooks === false || r.notified) return undefined;
    r.notified = true;
    return fake.sendWebhook(r.id).catch(() => 0);
  }

  const links = (r: FakeFalRequest) => {
    const root = `${url}/${r.appId}/requests/${r.id}`;
    return { response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel` };
  };

  async function handle(req: IncomingMessage, res: ServerResponse, on: 'queue' | 'storage'): Promise<void> {
    const raw = await readBody(req);
    const type = String(req.headers['content-type'] ?? '');
    let body: unknown = raw.length === 0 ? undefined : raw;
    if (raw.length > 0 && type.includes('json')) {
      try {
        body = JSON.parse(raw.toString('utf8')) as unknown;
      } catch {
        body = raw.toString('utf8');
      }
    }
    fake.calls.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body });
    const u = new URL(req.url ?? '/', url);
    const json = (code: number, value: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };

    // Unauthenticated, unfaulted: the JWKS, presigned uploads.
    if (on === 'queue' && req.method === 'GET' && u.pathname === '/.well-known/jwks.json') return json(200, { keys: [jwk] });
    const upload = /^\/upload\/(\d+)$/.exec(u.pathname);
    if (on === 'storage' && req.method === 'PUT' && upload) {
      const file = { bytes: raw, contentType: type || 'application/octet-stream' };
      fake.files.set(`/files/${upload[1]}`, file);
      fileHost.serve(`/files/${upload[1]}`, file.bytes, file.contentType);
      return void res.writeHead(200).end();
    }

    const fault = faults.shift();
    if (fault) {
      if ('malformed' in fault) return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }) });
      return void res.end(JSON.stringify({ detail: fault.detail ?? `fake fault ${fault.status}` }));
    }
    if (!String(req.headers.authorization ?? '').startsWith('Key ')) return json(401, { detail: 'No user found for Key ID and Secret' });

    if (on === 'storage') {
      if (req.method !== 'POST' || u.pathname !== '/storage/upload/initiate') return json(404, { detail: 'Not Found' });
      const n = ++uploads;
      return json(200, { upload_url: `${storageUrl}/upload/${n}`, file_url: `${fileHost.url}/files/${n}` });
    }
    const m = /^\/(.+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(u.pathname);
    if (m) {
      const r = fake.requests.get(m[2]!);
      // Only the app id (no endpoint subpath) serves request URLs, as on fal.
      if (!r || r.appId !== m[1]) return json(404, { detail: 'Request not found' });
      if (m[3] === '/cancel' && req.method === 'PUT') {
        fake.cancels.push(r.id);
        if (status(r) === 'COMPLETED') return json(400, { status: 'ALREADY_COMPLETED' });
        r.cancelled = true;
        return json(202, { status: 'CANCELLATION_REQUESTED' });
      }
      if (m[3] === '/status' && req.method === 'GET') {
        // A held request answers IN_PROGRESS; otherwise the current step is answered and the next poll sees the next one.
        if (r.held && statuses.includes('IN_PROGRESS')) r.step = statuses.indexOf('IN_PROGRESS');
        const now = status(r);
        const firstCompleted = now === 'COMPLETED' && !r.cancelled && !r.notified;
        if (!r.held && r.step < statuses.length - 1) r.step++;
        if (firstCompleted) void finished(r);
        const failure = options.errorOnStatus === false ? undefined : r.failure ?? (r.cancelled ? 'Request was cancelled' : undefined);
        return json(200, {
          status: now,
          ...links(r),
          ...(now === 'IN_QUEUE' ? { queue_position: 0 } : {}),
          ...(now === 'COMPLETED' ? { metrics: { inference_time: 1.25 }, ...(failure === undefined ? {} : { error: failure, error_type: 'runner_server_error' }) } : {}),
          logs: u.searchParams.get('logs') === '1' ? [] : null,
        });
      }
      if (!m[3] && req.method === 'GET') {
        if (status(r) !== 'COMPLETED') return json(400, { detail: 'Request is still in progress' });
        if (r.failure !== undefined) return json(422, { detail: [{ loc: ['body', 'prompt'], msg: r.failure, type: 'value_error' }] });
        if (r.cancelled) return json(400, { detail: 'Request was cancelled' });
        return json(200, result());
      }
      return json(405, { detail: 'Method not allowed' });
    }
    if (req.method === 'POST' && /^\/[^/]+\/[^/]+/.test(u.pathname)) {
      const endpoint = u.pathname.slice(1);
      const r: FakeFalRequest = {
        id: randomUUID(),
        endpoint,
        appId: appIdOf(endpoint),
        input: body,
        webhook: u.searchParams.get('fal_webhook') ?? undefined,
        step: 0,
        held: options.hold ?? false,
        cancelled: false,
        failure: failAll,
        notified: false,
      };
      fake.requests.set(r.id, r);
      return json(200, { request_id: r.id, gateway_request_id: r.id, ...(options.bareSubmitAnswer ? {} : { ...links(r), queue_position: 0, status: 'IN_QUEUE' }) });
    }
    return json(404, { detail: 'Not Found' });
  }

  const serve = (on: 'queue' | 'storage') =>
    createServer((req, res) => {
      handle(req, res, on).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
  const server = serve('queue');
  const storage = serve('storage');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => storage.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  storageUrl = `http://127.0.0.1:${(storage.address() as AddressInfo).port}`;
  (fake as { url: string }).url = url;
  (fake as { storageUrl: string }).storageUrl = storageUrl;
  return fake;
}
