import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';
import { isPng } from '../helpers/media.js';

/**
 * Issue 41's "done when": the official SDK against the server as `npm start` runs it (the compiled
 * binary, zero setup: a fresh data dir, the first-start token, no config file), catalog model ids
 * as `model`.
 */
describe('the official openai SDK against the compiled server with no config', { timeout: 180_000 }, () => {
  let server: Server;
  let client: OpenAI;
  beforeAll(async () => {
    server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '0']);
    const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    client = new OpenAI({ apiKey: token!, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 120_000 });
  });
  afterAll(cleanup);

  it('lists the catalog, generates a PNG by a catalog model id, and raises its typed errors', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('image/vendor-b/model-b-1');
    const r = await client.images.generate({ model: 'image/vendor-b/model-b-1', prompt: 'a lighthouse at dusk', size: '512x512' });
    const png = Buffer.from(await (await fetch(r.data![0]!.url!)).arrayBuffer());
    expect(isPng(png)).toBe(true);
    await expect(client.images.generate({ model: 'image/vendor-b/no-such-model', prompt: 'p' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const stranger = new OpenAI({ apiKey: 'mg_not-a-token', baseURL: `${server.url}/v1`, maxRetries: 0 });
    await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
