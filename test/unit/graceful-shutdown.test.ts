import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { drain, trackInFlight } from '../../src/cli/graceful-shutdown.js';

function listen(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  return new Promise<typeof server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function rawRequest(port: number): { closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  let data = '';
  socket.on('data', (d) => (data += d));
  return { closed: new Promise((resolve) => socket.on('close', () => resolve(data))) };
}

const closeServer = (server: ReturnType<typeof createServer>) => () =>
  new Promise<void>((resolve) => server.close(() => resolve()));

describe('drain', () => {
  it('waits for the request in flight, which is answered with Connection: close', async () => {
    let finish!: () => void;
    const server = await listen((_req, res) => {
      finish = () => res.end('done');
    });
    const inFlight = trackInFlight(server);
    const { port } = server.address() as AddressInfo;
    const client = rawRequest(port);
    while (inFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
    const drained = drain(closeServer(server), server, inFlight, 5_000);
    setTimeout(() => finish(), 50);
    expect(await drained).toBe(0);
    const response = await client.closed;
    expect(response).toMatch(/^HTTP\/1\.1 200/);
    expect(response.toLowerCase()).toContain('connection: close');
    expect(response.endsWith('done')).toBe(true);
  });

  it('cuts a request that outlives the grace period and says so', async () => {
    const server = await listen(() => {
      /* never answers */
    });
    const inFlight = trackInFlight(server);
    const { port } = server.address() as AddressInfo;
    const client = rawRequest(port);
    while (inFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
    expect(await drain(closeServer(server), server, inFlight, 100)).toBe(1);
    expect(await client.closed).toBe('');
  });
});
