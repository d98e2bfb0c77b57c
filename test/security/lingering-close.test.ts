import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOptionsFor } from '../../src/app/settings.js';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

/**
 * Answers sent while the client is still sending (docs/security.md, "Lingering close"): a client
 * that writes its whole body before reading, as Python's http.client and Node's fetch do, reads the
 * JSON answer instead of failing with a broken pipe, and a client that keeps sending is still cut
 * within the linger bounds.
 */

const B1 = '/generate/image/vendor-b/model-b-1';
const MB = 1024 * 1024;

async function listening(flags: Record<string, string> = {}): Promise<{ t: TestApp; port: number }> {
  const config = loadConfig({ env: {}, flags });
  const t = await createTestApp({ http: httpOptionsFor(config), assets: { maxBytes: 8 * MB } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, port: (t.app.server.address() as AddressInfo).port };
}

/** Sends `head` then `total` body bytes in 64 KiB chunks, as fast as the socket takes them; resolves with what came back and whether sending hit an error. */
function rawPost(port: number, head: string, total: number, opts: { everyMs?: number } = {}): Promise<{ received: string; sendError: string | undefined; sent: number; closedMs: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    let sent = 0;
    let sendError: string | undefined;
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (sendError ??= err.code ?? err.message));
    socket.on('close', () => resolve({ received, sendError, sent, closedMs: performance.now() - started }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    socket.once('connect', async () => {
      socket.write(head);
      while (sent < total && !socket.destroyed && socket.writable) {
        const n = Math.min(chunk.length, total - sent);
        const ok = socket.write(n === chunk.length ? chunk : chunk.subarray(0, n));
        sent += n;
        if (opts.everyMs) await new Promise((r) => setTimeout(r, opts.everyMs));
        else if (!ok) await new Promise((r) => socket.once('drain', r).once('close', r));
      }
      // Everything sent: the client's half of the connection ends, as an HTTP client's does once it has read the answer.
      if (!socket.destroyed) socket.end();
    });
  });
}

const jsonAnswer = (raw: string) => {
  const at = raw.indexOf('\r\n\r\n');
  return { status: Number(raw.slice(9, 12)), headers: raw.slice(0, at).toLowerCase(), body: JSON.parse(raw.slice(at + 4)) as { error: string } };
};

/** Python's http.client POSTs `size` bytes to `path` and prints the status and body it read (or the exception). */
function pythonPost(port: number, path: string, size: number, headers: Record<string, string>): Promise<string> {
  const script = [
    'import http.client, json, sys',
    `c = http.client.HTTPConnection("127.0.0.1", ${port}, timeout=30)`,
    'try:',
    `    c.request("POST", ${JSON.stringify(path)}, body=b" " * ${size}, headers=json.loads(sys.argv[1]))`,
    '    r = c.getresponse()',
    '    print(r.status, r.read().decode())',
    'except Exception as e:',
    '    print("EXC", type(e).__name__, e)',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, JSON.stringify(headers)]);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', () => resolve(out.trim()));
  });
}

describe('lingering close', { timeout: 60_000 }, () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    ({ t, port } = await listening({ 'linger-timeout-ms': '2000', 'linger-max-bytes': String(64 * MB) }));
  });
  afterAll(() => t.close());

  const head = (path: string, length: number, extra = '') =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  it('a raw client writing a 30 MB JSON body in chunks reads the whole 413 answer after sending all of it', async () => {
    const size = 30 * MB;
    const r = await rawPost(port, head(B1, size), size);
    expect(r.sendError).toBeUndefined();
    expect(r.sent).toBe(size);
    const answer = jsonAnswer(r.received);
    expect(answer.status).toBe(413);
    expect(answer.headers).toContain('connection: close');
    expect(answer.body.error).toContain('the request body is larger than the server accepts');
  });

  it("Node's fetch sending 30 MB gets the 413 JSON answer, not EPIPE", async () => {
    const res = await fetch(`http://127.0.0.1:${port}${B1}`, { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: Buffer.alloc(30 * MB, 0x20) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toContain('larger than the server accepts');
  });

  it("Python's http.client reads the 413 of a 30 MB body, the 401 of a bad token and the size refusal of an asset, instead of BrokenPipeError", async () => {
    const big = await pythonPost(port, B1, 30 * MB, { Authorization: `Bearer ${t.token}`, 'Content-Type': 'application/json' });
    expect(big).toMatch(/^413 \{"error":"the request body is larger than the server accepts/);
    const unauthenticated = await pythonPost(port, B1, 8 * MB, { Authorization: 'Bearer mg_not_a_token', 'Content-Type': 'application/json' });
    expect(unauthenticated).toMatch(/^401 \{"error":/);
    const boundary = 'b0undary';
    const asset = await pythonPost(port, '/assets', 20 * MB, { Authorization: `Bearer ${t.token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` });
    expect(asset).toMatch(/^4\d\d \{"error":/);
  });

  it('an asset upload larger than asset_max_bytes, streamed, reads its refusal', async () => {
    const boundary = 'xYzBoundary';
    const preamble = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const size = 20 * MB;
    const total = Buffer.byteLength(preamble) + size;
    const r = await new Promise<{ received: string; sendError?: string }>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      let received = '';
      let sendError: string | undefined;
      socket.on('data', (d) => (received += d.toString('latin1')));
      socket.on('error', (e: NodeJS.ErrnoException) => (sendError ??= e.code));
      socket.on('close', () => resolve({ received, ...(sendError ? { sendError } : {}) }));
      socket.once('connect', async () => {
        socket.write(`POST /assets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${total}\r\n\r\n${preamble}`);
        socket.write(png);
        const chunk = Buffer.alloc(64 * 1024, 1);
        for (let sent = png.length; sent < size && socket.writable; sent += chunk.length) {
          if (!socket.write(chunk.subarray(0, Math.min(chunk.length, size - sent)))) await new Promise((res) => socket.once('drain', res).once('close', res));
        }
        if (!socket.destroyed) socket.end();
      });
    });
    expect(r.sendError).toBeUndefined();
    const answer = jsonAnswer(r.received);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatch(/larger than the .* an asset may be/);
  });

  it('a client that keeps trickling after the answer is cut at the linger time, counted by the connection cap meanwhile', async () => {
    const counted: number[] = [];
    const probe = setInterval(() => t.app.server.getConnections((_e, n) => counted.push(n)), 100);
    const r = await rawPost(port, head(B1, 200 * MB, ''), 200 * MB, { everyMs: 50 }).finally(() => clearInterval(probe));
    // The lingering socket stayed one of the server's connections, which max_connections counts.
    expect(Math.max(...counted)).toBeGreaterThanOrEqual(1);
    const answer = jsonAnswer(r.received.slice(0, r.received.indexOf('}') + 1));
    expect(answer.status).toBe(413);
    // Cut at about the 2 s linger bound, long before its 200 MB could arrive at this pace.
    expect(r.closedMs).toBeLessThan(15_000);
    expect(r.sent).toBeLessThan(200 * MB);
  });

  it('a client that sends more than the linger byte bound is cut there', async () => {
    const r = await rawPost(port, head(B1, 200 * MB), 200 * MB);
    expect(jsonAnswer(r.received).status).toBe(413);
    expect(r.sent).toBeLessThan(200 * MB);
  });
});
