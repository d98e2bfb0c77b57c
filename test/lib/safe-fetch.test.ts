import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchError, createGuardedDispatcher, fetchInput } from '../../src/lib/safe-fetch.js';
import type { FetchErrorReason, FetchInputOptions, Resolver } from '../../src/lib/safe-fetch.js';

/** Requests and connections the loopback server has seen, per path. */
const hits = new Map<string, number>();
let connections = 0;
/** The loopback server's open connections. */
const open = new Set<Socket>();
let server: Server;
let port: number;
let base: string;
const dispatchers: Dispatcher[] = [];

function hitsOf(path: string): number {
  return hits.get(path) ?? 0;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.set(url.pathname, hitsOf(url.pathname) + 1);
    const [, route, arg] = url.pathname.split('/');
    switch (route) {
      case 'ok':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello');
        return;
      case 'close':
        // Forces the next fetch to open a new connection, and so to resolve the name again.
        res.writeHead(200, { connection: 'close' }).end('bye');
        return;
      case 'redirect': {
        const n = Number(arg);
        res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/ok' }).end();
        return;
      }
      case 'status-redirect':
        res.writeHead(Number(arg), { location: '/ok' }).end();
        return;
      case 'loop':
        res.writeHead(302, { location: '/loop' }).end();
        return;
      case 'to':
        res.writeHead(307, { location: url.searchParams.get('target')! }).end();
        return;
      case 'declared-big':
        // Claims a large body and then sends nothing: only an early refusal ends this quickly.
        res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).flushHeaders();
        return;
      case 'chunked':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, i));
        res.end();
        return;
      case 'stall-body':
        res.writeHead(200).write('part of it');
        return;
      case 'hang':
        return;
      default:
        res.writeHead(404).end('no');
    }
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.destroy()));
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

/** A dispatcher that allows only 127.0.0.1, so the test server is reachable and nothing else is. */
function onlyTheTestServer(resolve?: Resolver): Dispatcher {
  const d = createGuardedDispatcher({ allowPrivate: false, isAllowed: (a) => a === '127.0.0.1', ...(resolve ? { resolve } : {}) });
  dispatchers.push(d);
  return d;
}

const DEFAULTS: FetchInputOptions = { allowPrivate: false, maxBytes: 1024 * 1024, timeoutMs: 5000 };

async function failure(url: string, options: Partial<FetchInputOptions> = {}): Promise<FetchError> {
  try {
    await fetchInput(url, { ...DEFAULTS, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    return err as FetchError;
  }
  throw new Error(`fetched ${url}`);
}

async function expectFailure(url: string, reason: FetchErrorReason, message: string | RegExp, options: Partial<FetchInputOptions> = {}) {
  const err = await failure(url, options);
  expect({ reason: err.reason, message: err.message }).toEqual({ reason, message: typeof message === 'string' ? message : expect.stringMatching(message) });
  return err;
}

describe('the default policy refuses private addresses', () => {
  it('refuses the loopback test server by address, and no connection reaches it', async () => {
    const before = connections;
    await expectFailure(`${base}/ok`, 'refused_address', 'refused: 127.0.0.1 is a loopback address');
    expect(connections).toBe(before);
    expect(hitsOf('/ok')).toBe(0);
  });

  it.each([
    ['decimal', `http://2130706433:PORT/ok`],
    ['hex', `http://0x7f000001:PORT/ok`],
    ['octal', `http://0177.0.0.1:PORT/ok`],
    ['short', `http://127.1:PORT/ok`],
    ['trailing-dot', `http://127.0.0.1.:PORT/ok`],
  ])('refuses the %s form of 127.0.0.1', async (_form, url) => {
    const before = connections;
    await expectFailure(url.replace('PORT', String(port)), 'refused_address', 'refused: 127.0.0.1 is a loopback address');
    expect(connections).toBe(before);
  });

  it('refuses a name that resolves to loopback, at connect time', async () => {
    const before = connections;
    await expectFailure(`http://localhost:${port}/ok`, 'refused_address', /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
    expect(connections).toBe(before);
  });

  it('refuses such a name over https too', async () => {
    await expectFailure(`https://localhost:${port}/ok`, 'refused_address', /^refused: localhost resolves to/);
  });

  it.each([
    ['http://[::1]:9/', 'refused: ::1 is a loopback address'],
    ['http://169.254.169.254/latest/meta-data/', 'refused: 169.254.169.254 is the cloud metadata address'],
    ['http://10.0.0.1/', 'refused: 10.0.0.1 is a private address'],
    ['http://192.168.1.1/', 'refused: 192.168.1.1 is a private address'],
    ['http://172.16.0.1/', 'refused: 172.16.0.1 is a private address'],
    ['http://100.64.0.1/', 'refused: 100.64.0.1 is a shared (carrier-grade NAT) address'],
    ['http://0.0.0.0/', 'refused: 0.0.0.0 is a "this network" address'],
    ['https://[fe80::1]/', 'refused: fe80::1 is a link-local address'],
    ['http://[fc00::1]/', 'refused: fc00::1 is a unique-local address'],
    ['http://[fd00:ec2::254]/', 'refused: fd00:ec2::254 is the cloud metadata address'],
    ['http://[::ffff:127.0.0.1]/', 'refused: ::ffff:7f00:1 is a loopback address'],
    ['http://[::ffff:169.254.169.254]/', 'refused: ::ffff:a9fe:a9fe is the cloud metadata address'],
  ])('refuses %s before connecting', async (url, message) => {
    // A connection attempt to these would hang until the timeout; a refusal is immediate.
    const started = Date.now();
    await expectFailure(url, 'refused_address', message);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('with private addresses allowed', () => {
  it('fetches from the loopback server and returns the body, type and URL', async () => {
    const r = await fetchInput(`${base}/ok`, { ...DEFAULTS, allowPrivate: true });
    expect({ data: r.data.toString(), contentType: r.contentType, finalUrl: r.finalUrl }).toEqual({
      data: 'hello',
      contentType: 'text/plain; charset=utf-8',
      finalUrl: `${base}/ok`,
    });
  });

  it('reports a closed port as a network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expectFailure(`http://127.0.0.1:${closedPort}/`, 'network', `could not fetch from 127.0.0.1:${closedPort}: connection refused`, { allowPrivate: true });
  });
});

describe('redirects', () => {
  it('follows redirects the policy allows and reports the final URL', async () => {
    const r = await fetchInput(`${base}/redirect/3`, { ...DEFAULTS, dispatcher: onlyTheTestServer() });
    expect(r.data.toString()).toBe('hello');
    expect(r.finalUrl).toBe(`${base}/ok`);
  });

  it.each([301, 302, 303, 307, 308])('follows a %i', async (status) => {
    const r = await fetchInput(`${base}/status-redirect/${status}`, { ...DEFAULTS, dispatcher: onlyTheTestServer() });
    expect(r.finalUrl).toBe(`${base}/ok`);
  });

  it('follows at most maxRedirects', async () => {
    const dispatcher = onlyTheTestServer();
    expect((await fetchInput(`${base}/redirect/2`, { ...DEFAULTS, dispatcher, maxRedirects: 3 })).finalUrl).toBe(`${base}/ok`);
    await expectFailure(`${base}/redirect/3`, 'too_many_redirects', `more than 2 redirects from 127.0.0.1:${port}`, { dispatcher, maxRedirects: 2 });
  });

  it('gives up on a redirect loop after 5 redirects by default', async () => {
    const before = hitsOf('/loop');
    await expectFailure(`${base}/loop`, 'too_many_redirects', `more than 5 redirects from 127.0.0.1:${port}`, { dispatcher: onlyTheTestServer() });
    expect(hitsOf('/loop') - before).toBe(6);
  });

  it.each([
    ['127.0.0.2', `http://127.0.0.2:PORT/ok`, 'refused: 127.0.0.2 is a loopback address'],
    ['[::1]', `http://[::1]:PORT/ok`, 'refused: ::1 is a loopback address'],
  ])('refuses a redirect to %s on the second hop', async (_host, target, message) => {
    const before = hitsOf('/ok');
    const url = `${base}/to?target=${encodeURIComponent(target.replace('PORT', String(port)))}`;
    await expectFailure(url, 'refused_address', `${message} (redirect from 127.0.0.1:${port})`, { dispatcher: onlyTheTestServer() });
    expect(hitsOf('/to')).toBeGreaterThan(0);
    expect(hitsOf('/ok')).toBe(before);
  });

  it('refuses a redirect to a name with any refused address (localhost as 127.0.0.1 and ::1)', async () => {
    const dualStack: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
    const before = hitsOf('/ok');
    const url = `${base}/to?target=${encodeURIComponent(`http://localhost:${port}/ok`)}`;
    const err = await expectFailure(url, 'refused_address', /^refused: localhost resolves to ::1, a loopback address/, { dispatcher: onlyTheTestServer(dualStack) });
    expect(err.message).toContain('(redirect from');
    expect(hitsOf('/ok')).toBe(before);
  });

  it('refuses a redirect to something that is not a URL', async () => {
    const url = `${base}/to?target=${encodeURIComponent('http://exa mple.com/')}`;
    await expectFailure(url, 'bad_url', `not a valid URL (redirect from 127.0.0.1:${port})`, { dispatcher: onlyTheTestServer() });
  });

  it('refuses a redirect to another scheme', async () => {
    const url = `${base}/to?target=${encodeURIComponent('file:///etc/passwd')}`;
    await expectFailure(url, 'bad_url', `unsupported URL scheme "file:" (redirect from 127.0.0.1:${port}); only http and https URLs are fetched`, {
      dispatcher: onlyTheTestServer(),
    });
  });
});

describe('checking at connect time', () => {
  it('checks the addresses a name resolves to on every new connection (DNS rebinding)', async () => {
    const answers = ['127.0.0.1', '127.0.0.2'];
    const rebinding: Resolver = async () => [{ address: answers.shift() ?? '127.0.0.2', family: 4 }];
    const dispatcher = onlyTheTestServer(rebinding);
    const first = await fetchInput(`http://rebind.test:${port}/close`, { ...DEFAULTS, dispatcher });
    expect(first.data.toString()).toBe('bye');
    await expectFailure(`http://rebind.test:${port}/close`, 'refused_address', 'refused: rebind.test resolves to 127.0.0.2, a loopback address', { dispatcher });
    expect(hitsOf('/close')).toBe(1);
  });

  it('takes only dispatchers made by createGuardedDispatcher', async () => {
    const plain = new Agent();
    await expect(fetchInput(`${base}/ok`, { ...DEFAULTS, dispatcher: plain })).rejects.toThrow(TypeError);
    await plain.close();
  });
});

describe('limits', () => {
  it('refuses a declared Content-Length over maxBytes before reading the body', async () => {
    const started = Date.now();
    await expectFailure(`${base}/declared-big`, 'too_large', `the input from 127.0.0.1:${port} is larger than 1 MiB`, { allowPrivate: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a chunked body once it passes maxBytes while streaming', async () => {
    await expectFailure(`${base}/chunked`, 'too_large', `the input from 127.0.0.1:${port} is larger than 100 KiB`, {
      allowPrivate: true,
      maxBytes: 100 * 1024,
    });
    const r = await fetchInput(`${base}/chunked`, { ...DEFAULTS, allowPrivate: true, maxBytes: 1024 * 1024 });
    expect(r.data.length).toBe(1024 * 1024);
  });

  it('times out a server that never answers within timeoutMs', async () => {
    const started = Date.now();
    await expectFailure(`${base}/hang`, 'timeout', `timed out after 300 ms fetching from 127.0.0.1:${port}`, { allowPrivate: true, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('times out a body that stops arriving, the timeout covering the whole fetch', async () => {
    await expectFailure(`${base}/stall-body`, 'timeout', /^timed out after 300 ms/, { allowPrivate: true, timeoutMs: 300 });
  });
});

describe('failures', () => {
  it('fails on a non-2xx status, naming the host but not the query', async () => {
    const err = await expectFailure(`${base}/missing?token=secret`, 'http_status', `HTTP 404 from 127.0.0.1:${port}`, { allowPrivate: true });
    expect(err.message).not.toContain('secret');
  });

  it.each(['ftp://example.com/a.png', 'file:///etc/passwd', 'data:image/png;base64,AAAA', 'javascript:alert(1)', 'gopher://127.0.0.1:6379/_'])(
    'refuses the non-http URL %s',
    async (url) => {
      await expectFailure(url, 'bad_url', /^unsupported URL scheme "[a-z]+:"; only http and https URLs are fetched$/);
    },
  );

  it('refuses what is not a URL', async () => {
    await expectFailure('/relative/path.png', 'bad_url', 'not a valid URL');
    await expectFailure('http://exa mple.com/', 'bad_url', 'not a valid URL');
  });

  it('refuses URLs with credentials without repeating them', async () => {
    const err = await expectFailure('https://user:hunter2@example.com/a.png', 'bad_url', 'URLs with credentials are not fetched (example.com)');
    expect(err.message).not.toContain('hunter2');
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expectFailure(`${base}/hang`, 'aborted', `fetching from 127.0.0.1:${port} was aborted`, { allowPrivate: true, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('does not start when the signal has already aborted', async () => {
    const before = hitsOf('/ok');
    await expectFailure(`${base}/ok`, 'aborted', `fetching from 127.0.0.1:${port} was aborted`, { allowPrivate: true, signal: AbortSignal.abort() });
    expect(hitsOf('/ok')).toBe(before);
  });
});

describe('connections', () => {
  // The test server's connections opened since `before` and still open: a connection the fetch
  // left open keeps its server end open too (the server keeps idle connections for 5 s). Counting
  // the process's sockets instead counted other test files' too, which close when they will (the
  // worker runs files in turn), and older connections of this file may close meanwhile.
  type Mark = ReadonlySet<Socket>;
  const mark = (): Mark => new Set(open);
  const openSince = (before: Mark) => [...open].filter((s) => !before.has(s)).length;

  it('leaves no connection open after a fetch, whether it succeeds or fails', async () => {
    const before = mark();
    const options = { ...DEFAULTS, allowPrivate: true, timeoutMs: 300, maxBytes: 100 * 1024 };
    await fetchInput(`${base}/ok`, options);
    for (const path of ['/declared-big', '/chunked', '/stall-body', '/hang', '/missing', '/loop']) {
      await expect(fetchInput(`${base}${path}`, options)).rejects.toBeInstanceOf(FetchError);
    }
    await settled(before);
    expect(openSince(before)).toBe(0);
  });

  it('closes the connection of every failed fetch on a shared dispatcher', async () => {
    const before = mark();
    const dispatcher = onlyTheTestServer();
    const options = { ...DEFAULTS, dispatcher, timeoutMs: 300, maxBytes: 100 * 1024 };
    for (const path of ['/declared-big', '/chunked', '/stall-body', '/hang', '/missing', '/loop', '/redirect/9']) {
      await expect(fetchInput(`${base}${path}`, options)).rejects.toBeInstanceOf(FetchError);
    }
    await settled(before);
    expect(openSince(before)).toBe(0);
  });

  async function settled(before: Mark): Promise<void> {
    for (let i = 0; i < 25 && openSince(before) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  }
});
