import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import type { Resolver } from '../../src/lib/safe-fetch.js';
import { newWebhookSecret, webhookHeaders } from '../../src/lib/standard-webhooks.js';
import { postWebhook } from '../../src/worker/webhook-post.js';
import type { PostWebhookOptions } from '../../src/worker/webhook-post.js';

interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly socket: Socket;
}

/** Every request the receiver has seen, in order. */
let received: Received[] = [];
let server: Server;
let base: string;
let port: number;
const dispatchers: Dispatcher[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), socket: req.socket });
      switch (path) {
        case '/ok':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
          return;
        case '/no-content':
          res.writeHead(204).end();
          return;
        case '/redirect':
          res.writeHead(302, { location: '/target' }).end();
          return;
        case '/target':
          res.writeHead(200).end();
          return;
        case '/fail':
          res.writeHead(500).end('oops');
          return;
        case '/gone':
          res.writeHead(410).end();
          return;
        case '/slow-down':
          res.writeHead(429, { 'retry-after': '7' }).end();
          return;
        case '/unavailable':
          res.writeHead(503, { 'retry-after': new Date(Date.UTC(2030, 0, 1, 0, 1, 0)).toUTCString() }).end();
          return;
        case '/unavailable-garbage':
          res.writeHead(503, { 'retry-after': 'later' }).end();
          return;
        case '/big':
          // More than is read: the client must drop the connection rather than read it all.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, i));
          res.end();
          return;
        case '/stall-body':
          res.writeHead(200).write('part of it');
          return;
        case '/hang':
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

beforeEach(() => {
  received = [];
});

afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.destroy()));
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

function dispatcher(allowPrivate: boolean, resolve?: Resolver): Dispatcher {
  const d = createGuardedDispatcher(resolve ? { allowPrivate, resolve } : { allowPrivate });
  dispatchers.push(d);
  return d;
}

/** A clock that moves 25 ms each time it is read: durations come from it, not from Date.now. */
function steppingClock(): () => number {
  let t = 1_000_000;
  return () => (t += 25);
}

const body = JSON.stringify({ job_id: 'job_1', status: 'completed', result: { urls: ['https://x.test/o.png'] } });
const hooks = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,abc' };

function options(overrides: Partial<PostWebhookOptions> = {}): PostWebhookOptions {
  return { dispatcher: dispatcher(true), timeoutMs: 5_000, nowMs: steppingClock(), ...overrides };
}

describe('postWebhook on a reachable receiver', () => {
  it('delivers on 200 and 204, and the receiver gets the exact body and headers', async () => {
    const secret = newWebhookSecret();
    const signed = webhookHeaders([secret], 'msg_9', Math.floor(Date.now() / 1000), body);
    const a = await postWebhook(`${base}/ok`, body, { ...signed }, options());
    expect(a).toEqual({ outcome: 'delivered', status: 200, error: null, durationMs: 25 });

    const got = received[0]!;
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/ok');
    expect(got.body).toBe(body);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got.headers['user-agent']).toBe('mediagen-webhooks/1');
    expect(got.headers['webhook-id']).toBe('msg_9');
    expect(got.headers['webhook-timestamp']).toBe(signed['webhook-timestamp']);
    expect(got.headers['webhook-signature']).toBe(signed['webhook-signature']);
    expect(got.headers.authorization).toBeUndefined();
    // What a receiver does: verify the raw body against the headers it was sent with.
    const { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig } = got.headers as Record<string, string>;
    expect(new Webhook(secret).verify(got.body, { 'webhook-id': id!, 'webhook-timestamp': ts!, 'webhook-signature': sig! })).toEqual(JSON.parse(body));

    const b = await postWebhook(`${base}/no-content`, body, hooks, options());
    expect(b).toMatchObject({ outcome: 'delivered', status: 204, error: null });
  });

  it('does not follow a redirect: the target receives nothing and the attempt is retried', async () => {
    const a = await postWebhook(`${base}/redirect`, body, hooks, options());
    expect(a).toMatchObject({ outcome: 'retry', status: 302, error: 'redirect not followed' });
    expect(received.map((r) => r.path)).toEqual(['/redirect']);
  });

  it('retries on 500 and stops on 410', async () => {
    expect(await postWebhook(`${base}/fail`, body, hooks, options())).toMatchObject({ outcome: 'retry', status: 500, error: null });
    expect(await postWebhook(`${base}/gone`, body, hooks, options())).toMatchObject({ outcome: 'gone', status: 410, error: null });
    expect(await postWebhook(`${base}/nowhere`, body, hooks, options())).toMatchObject({ outcome: 'retry', status: 404 });
  });

  it('reports Retry-After on 429 and 503, in seconds or as a date, and ignores a bad one', async () => {
    const a = await postWebhook(`${base}/slow-down`, body, hooks, options());
    expect(a).toMatchObject({ outcome: 'retry', status: 429, retryAfterMs: 7_000 });

    const now = Date.UTC(2030, 0, 1, 0, 0, 0);
    const b = await postWebhook(`${base}/unavailable`, body, hooks, options({ nowMs: () => now }));
    expect(b).toMatchObject({ outcome: 'retry', status: 503, retryAfterMs: 60_000, durationMs: 0 });

    const c = await postWebhook(`${base}/unavailable-garbage`, body, hooks, options());
    expect(c).toMatchObject({ outcome: 'retry', status: 503 });
    expect(c).not.toHaveProperty('retryAfterMs');
  });

  it('reads a small answer to the end, keeping the connection, and drops a large one', async () => {
    expect(await postWebhook(`${base}/fail`, body, hooks, options())).toMatchObject({ outcome: 'retry' });
    // 1 MiB is far past what is read: the client closes that connection instead of reading on.
    expect(await postWebhook(`${base}/big`, body, hooks, options())).toMatchObject({ outcome: 'delivered', status: 200 });
    const [small, big] = [received[0]!.socket, received[1]!.socket];
    for (let i = 0; i < 50 && !big.destroyed; i++) await new Promise((r) => setTimeout(r, 20));
    expect(big.destroyed).toBe(true);
    expect(small.destroyed).toBe(false);
  });

  it('counts a 2xx whose body never ends, and gives up on the body at the deadline', async () => {
    const t0 = Date.now();
    const a = await postWebhook(`${base}/stall-body`, body, hooks, options({ timeoutMs: 300 }));
    expect(a).toMatchObject({ outcome: 'delivered', status: 200, error: null });
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('retries with a timeout error when the receiver never answers', async () => {
    const t0 = Date.now();
    const a = await postWebhook(`${base}/hang`, body, hooks, options({ timeoutMs: 300 }));
    expect(a).toMatchObject({ outcome: 'retry', status: null, error: 'timeout after 300 ms' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(3_000);
    const b = await postWebhook(`${base}/hang`, body, hooks, options({ timeoutMs: 1_000 }));
    expect(b.error).toBe('timeout after 1 s');
  });

  it('sends user-info as Basic auth, not in the URL, and never in an error', async () => {
    const a = await postWebhook(`http://alice:s%40cret@127.0.0.1:${port}/ok`, body, hooks, options());
    expect(a.outcome).toBe('delivered');
    const got = received[0]!;
    expect(got.headers.authorization).toBe(`Basic ${Buffer.from('alice:s@cret').toString('base64')}`);
    expect(got.path).toBe('/ok');
    expect(got.headers.host).toBe(`127.0.0.1:${port}`);

    const closed = await closedPort();
    const failures = [
      await postWebhook(`http://alice:s%40cret@127.0.0.1:${closed}/ok`, body, hooks, options()),
      await postWebhook(`http://alice:s%40cret@127.0.0.1:${port}/ok`, body, hooks, options({ dispatcher: dispatcher(false) })),
      await postWebhook(`ftp://alice:s%40cret@127.0.0.1:${port}/ok`, body, hooks, options()),
    ];
    for (const f of failures) {
      expect(f.error).toBeTruthy();
      for (const secret of ['alice', 'cret', 's%40', 'job_1', 'v1,abc']) expect(f.error).not.toContain(secret);
    }
  });

  it('lets the given headers be in any case without sending duplicates', async () => {
    await postWebhook(`${base}/ok`, body, { 'Webhook-Id': 'msg_7', 'Content-Type': 'text/plain' }, options());
    const got = received[0]!;
    expect(got.headers['webhook-id']).toBe('msg_7');
    expect(got.headers['content-type']).toBe('application/json');
  });
});

/** A port nothing listens on: opened and closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return p;
}

describe('postWebhook when there is no answer', () => {
  it('retries on connection refused', async () => {
    const a = await postWebhook(`http://127.0.0.1:${await closedPort()}/ok`, body, hooks, options());
    expect(a).toMatchObject({ outcome: 'retry', status: null, error: 'connection refused' });
  });

  it('retries when the host name does not resolve', async () => {
    const resolve: Resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND hooks.invalid'), { code: 'ENOTFOUND' }));
    const a = await postWebhook('https://hooks.invalid/x', body, hooks, options({ dispatcher: dispatcher(false, resolve) }));
    expect(a).toMatchObject({ outcome: 'retry', status: null, error: 'host not found' });
  });

  it('retries on a TLS failure, naming it by code', async () => {
    // https to a plain-HTTP port: the handshake fails.
    const a = await postWebhook(`https://127.0.0.1:${port}/ok`, body, hooks, options());
    expect(a.outcome).toBe('retry');
    expect(a.status).toBeNull();
    expect(a.error).toMatch(/^TLS error \([A-Z_]+\)$/);
  });
});

describe('postWebhook refusals', () => {
  it('refuses a loopback address when private addresses are not allowed, saying why and how to allow it', async () => {
    const a = await postWebhook(`${base}/ok`, body, hooks, options({ dispatcher: dispatcher(false) }));
    expect(a).toMatchObject({
      outcome: 'refused',
      status: null,
      error: 'webhook URL refused: 127.0.0.1 is a loopback address; start the server with --allow-private-urls to allow it',
    });
    expect(received).toEqual([]);
  });

  it('refuses a name that resolves to a private address', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const a = await postWebhook(`http://hooks.example.test:${port}/ok`, body, hooks, options({ dispatcher: dispatcher(false, resolve) }));
    expect(a.outcome).toBe('refused');
    expect(a.error).toBe(
      'webhook URL refused: hooks.example.test resolves to 127.0.0.1, a loopback address; start the server with --allow-private-urls to allow it',
    );
    expect(received).toEqual([]);
  });

  it('refuses URLs that are not http(s), or not URLs', async () => {
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)']) {
      const a = await postWebhook(url, body, hooks, options());
      expect(a.outcome, url).toBe('refused');
      expect(a.error, url).toMatch(/^unsupported URL scheme ".+:"; webhook URLs must be http or https$/);
    }
    expect(await postWebhook('not a url', body, hooks, options())).toMatchObject({ outcome: 'refused', error: 'not a valid URL' });
    expect(await postWebhook(`http://%zz:x@127.0.0.1:${port}/ok`, body, hooks, options())).toMatchObject({ outcome: 'refused' });
    expect(received).toEqual([]);
  });

  it('takes only a guarded dispatcher', async () => {
    const plain = new Agent();
    dispatchers.push(plain);
    await expect(postWebhook(`${base}/ok`, body, hooks, options({ dispatcher: plain }))).rejects.toThrow(/createGuardedDispatcher/);
    expect(received).toEqual([]);
  });
});
