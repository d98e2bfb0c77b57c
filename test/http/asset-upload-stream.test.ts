import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

/**
 * Uploads over real HTTP on loopback, as curl sends them: a streamed body is counted as it
 * arrives and refused the moment it passes the limit, without waiting for the rest, and leaves
 * nothing in the store.
 */
const MAX = 64 * 1024;
const BOUNDARY = 'mediagen-test-boundary';

let t: TestApp;
let port = 0;

beforeAll(async () => {
  t = await createTestApp({ assets: { maxBytes: MAX } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});

afterAll(() => t.close());

const storedKeys = () => {
  try {
    return readdirSync(t.outputs.root);
  } catch {
    return [];
  }
};

/**
 * Sends a PNG-headed file of `total` bytes in 16 KiB chunks, chunked unless `contentLength` is
 * given, and stops writing once the server has answered.
 */
function send(total: number, contentLength?: number): Promise<{ status: number; body: string; written: number }> {
  return new Promise((resolve, reject) => {
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
    );
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/assets',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(contentLength !== undefined ? { 'content-length': String(contentLength) } : {}),
      },
    });
    let answered = false;
    let written = 0;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, written }));
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    req.write(head);
    const chunk = Buffer.alloc(16 * 1024, 7);
    chunk.write('\x89PNG\r\n\x1a\n', 0, 'latin1');
    const pump = () => {
      while (!answered && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      // With a Content-Length the server answers first; the rest is never sent.
      if (!answered && contentLength === undefined) req.end(`\r\n--${BOUNDARY}--\r\n`);
    };
    pump();
  });
}

describe('streamed uploads over real HTTP', () => {
  it('refuses a chunked upload past asset_max_bytes with 413 before reading it all, leaving no file', async () => {
    const before = storedKeys().length;
    const res = await send(64 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toMatch(/an asset may be/);
    // Answered long before the client could have sent its 64 MiB.
    expect(res.written).toBeLessThan(32 * 1024 * 1024);
    expect(storedKeys().length).toBe(before);
  });

  it('refuses a JSON body with 415 before reading it, whatever its size', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/assets',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'content-length': String(40 * 1024 * 1024) },
      });
      req.on('response', (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      // Only the start of the promised 40 MiB: the answer must come without the rest.
      req.write('"' + 'x'.repeat(1000));
    });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body).error).toMatch(/multipart\/form-data/);
  });

  it('refuses a Content-Length past the limit before a byte of the body is read', async () => {
    const res = await send(0, 512 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(res.written).toBe(0);
  });
});
