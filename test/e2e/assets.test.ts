import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { RUN_TIMEOUT_MS, api, cleanup, startServer, tempDir } from './binary.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The compiled binary on its default configuration (loopback input URLs refused, the public URL a
 * loopback address): a file uploaded as curl sends it becomes an input of a job, read from the
 * store, and its URL serves the same bytes.
 */
describe('assets through the compiled binary', { timeout: 60_000 }, () => {
  afterEach(() => cleanup());

  it('uploads a PNG as multipart, uses its image_url as an input on the default configuration, and serves it back', async () => {
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '0']);
    const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#c04020' } }).png().toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'photo.png');
    form.append('description', 'a red card');
    const res = await fetch(`${server.url}/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form, signal: AbortSignal.timeout(RUN_TIMEOUT_MS) });
    const asset = (await res.json()) as { image_url: string; mime_type: string; width: number; height: number };
    expect(res.status, JSON.stringify(asset)).toBe(200);
    expect(asset).toMatchObject({ mime_type: 'image/png', width: 48, height: 32 });
    expect(asset.image_url.startsWith(`${server.url}/assets/files/`)).toBe(true);

    const served = await fetch(asset.image_url, { signal: AbortSignal.timeout(RUN_TIMEOUT_MS) });
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);

    const created = await api(server.url, '/generate/image/vendor-a/model-a-2/medium', token!, {
      method: 'POST',
      body: { prompt: 'the card on a table', aspect_ratio: '1:1', resolution: '1K', image_url: asset.image_url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    let job: Record<string, unknown> = created.body;
    while (!['completed', 'failed'].includes(String(job.status)) && Date.now() < deadline) {
      await sleep(50);
      job = (await api(server.url, `/jobs/${String(created.body.job_id)}`, token!)).body;
    }
    expect(job.status, JSON.stringify(job)).toBe('completed');
    await server.stop();
  });
});
