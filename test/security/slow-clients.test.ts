import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOptionsFor } from '../../src/app/settings.js';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

/**
 * Slow and greedy clients against a real listening server, built with the options `mediagen serve`
 * derives from its config (httpOptionsFor), with short timeouts so the suite stays fast.
 */

const B1 = '/generate/image/vendor-b/model-b-1';

async function listening(flags: Record<string, string>): Promise<{ t: TestApp; port: number }> {
  const config = loadConfig({ env: {}, flags });
  const t = await createTestApp({ http: httpOptionsFor(config) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, port: (t.app.server.address() as AddressInfo).port };
}

interface RawConnection {
  readonly socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server ends or closes the connection, with ms since connect. */
  readonly closed: Promise<number>;
}

function open(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let data = '';
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<number>((done) => {
      socket.on('close', () => done(performance.now() - started));
    });
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is part of being cut
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes `text` one byte every `everyMs` until it is all sent or the socket is gone (bounded). */
async function trickle(socket: Socket, text: string, everyMs: number): Promise<number> {
  let sent = 0;
  for (const ch of text) {
    if (socket.destroyed || socket.writableEnded || !socket.writable) break;
    socket.write(ch);
    sent++;
    await sleep(everyMs);
  }
  return sent;
}

/** A GET on its own fresh connection (no keep-alive pool), with its status and time taken. */
function get(port: number, path: string, token: string): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function statusAndJson(raw: string): { status: number; headers: string; body: { error?: unknown } } {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(raw.slice(head.length + 4)) as { error?: unknown } };
}

describe('slow clients are cut and the server keeps serving others', () => {
  const REQUEST_MS = 1200;
  const HEADERS_MS = 300;
  const KEEP_ALIVE_MS = 300;
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    ({ t, port } = await listening({
      'request-timeout-ms': String(REQUEST_MS),
      'headers-timeout-ms': String(HEADERS_MS),
      'keep-alive-timeout-ms': String(KEEP_ALIVE_MS),
      // The rest of a refused body is read for this long at most (lingering-close.test.ts has the rest).
      'linger-timeout-ms': '300',
    }));
  });
  afterAll(() => t.close());

  it('a request refused before its body arrives (bad token) is answered once and its connection closed, not held open for the body', async () => {
    const body = JSON.stringify({ prompt: 'x'.repeat(200) });
    const conn = await open(port);
    conn.socket.write(
      `POST ${B1} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer mg_not_a_token\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    const sending = trickle(conn.socket, body, 20);
    const closedAfter = await conn.closed;
    await sending;
    // Closed at the linger bound after the 401, long before the request timeout would have cut a trickling body.
    expect(closedAfter).toBeLessThan(REQUEST_MS / 2);
    const raw = conn.received();
    expect(raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    const answer = statusAndJson(raw);
    expect(answer.status).toBe(401);
    expect(answer.headers).toContain('connection: close');
  });

  it('a body sent one byte at a time is cut with a 408 JSON error and its socket closed, while another GET answers 200 promptly', async () => {
    const body = JSON.stringify({ prompt: 'x'.repeat(200) });
    const conn = await open(port);
    conn.socket.write(
      `POST ${B1} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    // 20 ms a byte: the whole body would take 4 s, far past the request timeout.
    const sending = trickle(conn.socket, body, 20);
    await sleep(REQUEST_MS / 2);
    const other = await get(port, '/jobs', t.token);
    expect(other.status, other.body).toBe(200);
    expect(other.ms).toBeLessThan(REQUEST_MS / 2);

    const closedAfter = await conn.closed;
    const sent = await sending;
    expect(sent).toBeLessThan(Buffer.byteLength(body));
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(closedAfter).toBeLessThan(REQUEST_MS + 1500);
    const answer = statusAndJson(conn.received());
    expect(answer.status).toBe(408);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.headers).toContain('connection: close');
    expect(answer.body.error).toBe('the request was not received in time; the connection is closed');
    // The server is still fine: a normal request right after.
    expect((await get(port, '/jobs', t.token)).status).toBe(200);
  });

  it('headers sent slowly are cut at the headers timeout, long before the request timeout', async () => {
    const conn = await open(port);
    const sending = trickle(conn.socket, `GET /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`, 20);
    const closedAfter = await conn.closed;
    await sending;
    expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(closedAfter).toBeLessThan(REQUEST_MS);
    const answer = statusAndJson(conn.received());
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatch(/not received in time/);
  });

  it('a connection that never sends a byte is closed at the headers timeout', async () => {
    const conn = await open(port);
    const closedAfter = await conn.closed;
    expect(closedAfter).toBeLessThan(REQUEST_MS);
  });

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const conn = await open(port);
    conn.socket.write(`GET /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n\r\n`);
    const answeredAt = performance.now();
    const closedAfter = await conn.closed;
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(conn.received().toLowerCase()).toContain('keep-alive');
    // Closed by the server once idle for the keep-alive timeout; not held open for the client.
    expect(performance.now() - answeredAt).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 50);
    expect(closedAfter).toBeLessThan(KEEP_ALIVE_MS + 1500);
  });

  it('a JSON body over the route limit is 413 in the catalogue shape, over HTTP', async () => {
    const limit = httpOptionsFor(loadConfig({ env: {} })).bodyLimitBytes!;
    const payload = JSON.stringify({ prompt: 'x'.repeat(limit) });
    const res = await fetch(`http://127.0.0.1:${port}${B1}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', connection: 'close' },
      body: payload,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: `the request body is larger than the server accepts (${limit} bytes)` });
  });

  it('routes that take no body refuse a large one with 413', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/jobs/00000000-0000-0000-0000-000000000000`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ pad: 'x'.repeat(2048) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(/larger than the server accepts \(1024 bytes\)/);
  });

  it('the largest valid generation bodies fit the default body limit, even with every character escaped', async () => {
    const escape = (json: string) => json.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
    const url = (n: number) => `https://example.com/${'a'.repeat(n - 'https://example.com/'.length)}`;
    const a2 = {
      prompt: 'a fox',
      aspect_ratio: '1:1',
      resolution: '1K',
      image_url: url(1024),
      image_style_references: Array.from({ length: 10 }, () => ({ url: url(1024), strength: 0.5 })),
      moodboards: [{ id: '00000000-0000-4000-8000-000000000000', strength: 0.5 }],
    };
    // model-b-1's prompt: 6000 characters outside the BMP, each written as a \\u surrogate pair.
    const b1 = `{"prompt":"${'\\ud83d\\ude00'.repeat(6000)}","width":8192,"height":8192,"mode":"max","style":"manga","output_format":"jpeg"}`;
    const limit = httpOptionsFor(loadConfig({ env: {} })).bodyLimitBytes!;
    for (const [path, text] of [
      ['/generate/image/vendor-a/model-a-2/medium', escape(JSON.stringify(a2))],
      [B1, b1],
    ] as const) {
      expect(Buffer.byteLength(text)).toBeGreaterThan(60 * 1024);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(limit);
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', connection: 'close' },
        body: text,
      });
      expect(res.status, await res.clone().text()).toBe(200);
      await res.arrayBuffer();
    }
  });
});

describe('connections beyond max_connections', () => {
  const CAP = 3;
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    ({ t, port } = await listening({ 'max-connections': String(CAP), 'headers-timeout-ms': '5000', 'request-timeout-ms': '10000' }));
  });
  afterAll(() => t.close());

  const connections = () => new Promise<number>((resolve, reject) => t.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await ok()) return;
      await sleep(10);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('are closed at once without an answer, and the server serves again once the others close', async () => {
    const held = await Promise.all(Array.from({ length: CAP }, () => open(port)));
    await until('the held connections to be counted', async () => (await connections()) === CAP);

    const extra = await open(port);
    const closedAfter = await extra.closed;
    expect(closedAfter).toBeLessThan(1000);
    expect(extra.received()).toBe('');
    // A real client meets the same refusal while the cap is taken.
    await expect(get(port, '/jobs', t.token)).rejects.toThrow();
    expect(await connections()).toBe(CAP);

    for (const c of held) c.socket.destroy();
    await until('the held connections to close', async () => (await connections()) === 0);
    const after = await get(port, '/jobs', t.token);
    expect(after.status, after.body).toBe(200);
  });
});

describe('keep-alive behind a load balancer', () => {
  it('keeps an idle connection 72 s by default, longer than the common balancers idle timeout of 60 s', async () => {
    expect(loadConfig({ env: {} }).keepAliveTimeoutMs).toBe(72_000);
    const { t } = await listening({});
    try {
      expect(t.app.server.keepAliveTimeout).toBe(72_000);
      // Slow clients stay bounded by the header and request timeouts, not by the keep-alive.
      expect(t.app.server.headersTimeout).toBe(10_000);
      expect(t.app.server.requestTimeout).toBe(30_000);
    } finally {
      await t.close();
    }
  });
});
