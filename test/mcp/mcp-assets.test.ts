import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { backends } from '../helpers/backends.js';
import { A2_MEDIUM, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

/** upload_asset and list_assets: the same asset service as POST /assets, from base64 or a fetched URL. */

type Asset = { id: string; image_url: string; mime_type: string; width: number; height: number; metadata: { kind: string; filename?: string } };

const MAX_BYTES = 4000;
let png: Buffer;
let big: Buffer;
let files: Server;
let filesBase = '';

beforeAll(async () => {
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3060c0' } }).png().toBuffer();
  big = await sharp({ create: { width: 60, height: 60, channels: 3, background: '#000000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
  files = createServer((req, res) => {
    const body = req.url === '/pics/front.png' ? png : req.url === '/big.png' ? big : undefined;
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length }).end(body);
  });
  files.listen(0, '127.0.0.1');
  await once(files, 'listening');
  filesBase = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  files.closeAllConnections();
  await new Promise((r) => files.close(r));
});

describe.each(backends)('assets over MCP on $name', (backend) => {
  let t: TestApp;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp({ backend, assets: { maxBytes: MAX_BYTES } });
    client = await connect(await listen(t), t.token);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('upload_asset stores base64 content as POST /assets would, and list_assets lists it as GET /assets does', async () => {
    const asset = await call<Asset>(client, 'upload_asset', { content_base64: png.toString('base64'), filename: 'front.png', description: 'front' });
    expect(asset).toMatchObject({ mime_type: 'image/png', width: 40, height: 30, description: 'front', metadata: { kind: 'image', filename: 'front.png' } });
    expect((await get(t, `/assets/${asset.id}`)).json()).toEqual(asset);
    expect(await call(client, 'list_assets', { limit: 5 })).toEqual((await get(t, '/assets?limit=5')).json());
    // Its URL is an input of this server: generate takes it.
    const job = await call<{ status: string }>(client, 'generate', { model: A2_MEDIUM, input: { ...MINIMAL[A2_MEDIUM], image_url: asset.image_url } });
    expect(job.status).toBe('queued');
  });

  it('refuses what POST /assets refuses, with its message: a file past the size limit, bytes that are no media', async () => {
    const tooBig = errorOf(await uploadAsset(t.app, t.token, { bytes: big, filename: 'big.png' }), 413);
    expect(big.length).toBeGreaterThan(MAX_BYTES);
    expect((await callError(client, 'upload_asset', { content_base64: big.toString('base64'), filename: 'big.png' })).message).toBe(tooBig);
    const text = Buffer.from('just some text, not an image');
    const notMedia = errorOf(await uploadAsset(t.app, t.token, { bytes: text, filename: 'a.png' }), 400);
    expect((await callError(client, 'upload_asset', { content_base64: text.toString('base64'), filename: 'a.png' })).message).toBe(notMedia);
  });

  it('answers a body past the /mcp limit (the generation limit plus an inline file) with HTTP 413, before any JSON-RPC', async () => {
    const url = new URL('/mcp', t.app.listeningOrigin);
    const args = { content_base64: Buffer.alloc(200 * 1024).toString('base64') };
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'upload_asset', arguments: args } }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(/^the request body is larger than the server accepts \(\d+ bytes\)$/);
  });

  it('refuses arguments that name no single file', async () => {
    expect((await callError(client, 'upload_asset', {})).message).toBe("give exactly one of 'content_base64' and 'url'");
    expect((await callError(client, 'upload_asset', { content_base64: 'aGk=', url: 'https://example.com/x.png' })).message).toBe("give exactly one of 'content_base64' and 'url'");
    expect((await callError(client, 'upload_asset', { content_base64: 'not base64!' })).message).toMatch(/not valid base64/);
  });

  it("fetches a URL through the address guard: this server's own network is refused", async () => {
    const { message } = await callError(client, 'upload_asset', { url: `${filesBase}/pics/front.png` });
    expect(message).toBe('url: refused: 127.0.0.1 is a loopback address');
    expect((await call<{ items: unknown[] }>(client, 'list_assets')).items).toHaveLength(1);
  });
});

describe('upload_asset from a URL with --allow-private-urls', () => {
  let t: TestApp;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp({ allowPrivateUrls: true, assets: { maxBytes: MAX_BYTES } });
    client = await connect(await listen(t), t.token);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('stores the fetched file, named after the URL', async () => {
    const asset = await call<Asset>(client, 'upload_asset', { url: `${filesBase}/pics/front.png` });
    expect(asset).toMatchObject({ mime_type: 'image/png', width: 40, height: 30, metadata: { kind: 'image', filename: 'front.png' } });
  });

  it('stops a fetch at the size limit with the 413 message of POST /assets, and says when the fetch fails', async () => {
    const tooBig = errorOf(await uploadAsset(t.app, t.token, { bytes: big, filename: 'big.png' }), 413);
    expect((await callError(client, 'upload_asset', { url: `${filesBase}/big.png` })).message).toBe(tooBig);
    expect((await callError(client, 'upload_asset', { url: `${filesBase}/missing.png` })).message).toBe(`url: HTTP 404 from ${new URL(filesBase).host}`);
  });
});
