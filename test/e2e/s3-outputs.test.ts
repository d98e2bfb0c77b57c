import { readdirSync } from 'node:fs';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { readPngSize } from '../helpers/media.js';
import { s3ClientOf } from '../helpers/s3-output-store.js';
import { startS3Server } from '../helpers/s3-server.js';
import type { S3Server } from '../helpers/s3-server.js';
import { api, cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

type Job = { job_id: string; status: string; result?: { urls: string[] } };

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

/** Submits a job and waits for it to complete; its id and output URL. */
async function completedOutput(server: Server, token: string): Promise<{ id: string; url: string }> {
  const created = await api(server.url, `/generate/${MODEL}`, token, { method: 'POST', body: BODY });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const until = Date.now() + 30_000;
  let job: Job | undefined;
  while (Date.now() < until) {
    job = (await api(server.url, `/jobs/${created.body.job_id as string}`, token)).body as unknown as Job;
    if (job.status === 'completed') return { id: job.job_id, url: job.result!.urls[0]! };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the job did not complete; last seen ${JSON.stringify(job)}`);
}

/** The object the output URL names, read from the bucket itself. */
async function objectOf(s3: S3Server, prefix: string, url: string): Promise<Buffer> {
  const [key, name] = new URL(url).pathname.split('/').slice(-2);
  const client = s3ClientOf(s3);
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/${key}/${name}` }));
    return Buffer.from(await got.Body!.transformToByteArray());
  } finally {
    client.destroy();
  }
}

describe('mediagen serve with an S3-compatible output store (compiled binary, s3rver)', { timeout: 90_000 }, () => {
  let s3: S3Server | undefined;
  afterEach(async () => {
    await cleanup();
    await s3?.close();
    s3 = undefined;
  });

  it('stores a job\'s output in the bucket and serves it from the API, by range too; an unreachable bucket makes it not ready', async () => {
    s3 = await startS3Server();
    const dataDir = tempDir();
    const server = await startServer(['--port', '0', '--data-dir', dataDir, '--engine-latency-ms', '100'], { env: s3.env('e2e/serve') });
    const token = await tokenOf(server);
    const { url } = await completedOutput(server, token);
    // The result's URL is the API's own; the bytes are the bucket's object.
    expect(url.startsWith(`${server.url}/outputs/`)).toBe(true);
    const stored = await objectOf(s3, 'e2e/serve', url);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    const etag = whole.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const body = Buffer.from(await whole.arrayBuffer());
    expect(body.equals(stored)).toBe(true);
    expect(readPngSize(body)).toEqual({ width: 1344, height: 756 });
    const part = await fetch(url, { headers: { range: 'bytes=0-7', 'if-range': etag! } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-7/${stored.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(PNG_SIGNATURE)).toBe(true);
    expect((await fetch(url, { headers: { 'if-none-match': etag! } })).status).toBe(304);
    // No outputs on the local disk: only the runs' scratch root (emptied) sits beside the database.
    expect(readdirSync(dataDir)).not.toContain('outputs');
    expect(readdirSync(`${dataDir}/scratch`)).toEqual([]);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    await s3.close();
    s3 = undefined;
    // The bucket check is cached for 5 s; then /readyz says what is wrong, naming nothing.
    const until = Date.now() + 15_000;
    let ready: { status: number; body: string } = { status: 0, body: '' };
    while (Date.now() < until) {
      const r = await fetch(`${server.url}/readyz`);
      ready = { status: r.status, body: await r.text() };
      if (ready.status !== 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('object storage unreachable');
    expect(ready.body).not.toContain('mediagen-test');
    // While the bucket is down, the file answers 503, not 404 or 500, and names nothing.
    const down = await fetch(url);
    expect(down.status).toBe(503);
    const downBody = await down.text();
    expect(downBody).toContain('object storage is unreachable');
    expect(downBody).not.toMatch(/mediagen-test|e2e\/serve|127\.0\.0\.1/);
    expect(server.stderr()).not.toContain('NodeVersionSupportWarning');
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('with output_urls presign, answers an output URL with a 302 to a short-lived bucket URL of the same bytes', async () => {
    s3 = await startS3Server();
    const env = { ...s3.env('e2e/presign'), MEDIAGEN_OUTPUT_URLS: 'presign', MEDIAGEN_PRESIGN_TTL_SECONDS: '300' };
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '100'], { env });
    const token = await tokenOf(server);
    const { id, url } = await completedOutput(server, token);
    // Presigned URLs are never stored: the result keeps the API's URL.
    expect(url.startsWith(`${server.url}/outputs/`)).toBe(true);
    const redirect = await fetch(url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('cache-control')).toBe('private, no-store');
    const location = redirect.headers.get('location')!;
    expect(location.startsWith(`${s3.endpoint}/`)).toBe(true);
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('300');
    const stored = await objectOf(s3, 'e2e/presign', url);
    const followed = await fetch(location);
    expect(followed.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await followed.arrayBuffer()).equals(stored)).toBe(true);
    // A client following the redirect with its Range gets the range from the bucket.
    const part = await fetch(url, { headers: { range: 'bytes=0-7' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(PNG_SIGNATURE)).toBe(true);
    // HEAD is answered by the API (a GET signature fits no HEAD); a deleted job's URL is 404, no redirect.
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(stored.length));
    expect((await api(server.url, `/jobs/${id}`, token, { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(404);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('hands a job back to the queue, unfailed, when the bucket goes away under its run', async () => {
    s3 = await startS3Server();
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '3000'], { env: s3.env('e2e/outage') });
    const token = await tokenOf(server);
    const created = await api(server.url, `/generate/${MODEL}`, token, { method: 'POST', body: BODY });
    expect(created.status).toBe(200);
    const id = created.body.job_id as string;
    const until = Date.now() + 15_000;
    while ((await api(server.url, `/jobs/${id}`, token)).body.status !== 'processing') {
      if (Date.now() > until) throw new Error('the job never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    await s3.close();
    s3 = undefined;
    const deadline = Date.now() + 20_000;
    while (!server.stderr().includes('infrastructure_fault')) {
      if (Date.now() > deadline) throw new Error(`no infrastructure fault logged; stderr: ${server.stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const alert = server.stderr().split('\n').find((l) => l.includes('infrastructure_fault'))!;
    expect(JSON.parse(alert)).toMatchObject({ kind: 'object_store_unreachable', errno: 'OBJECT_STORE_UNREACHABLE', jobId: id });
    expect(alert).not.toMatch(/mediagen-test|e2e\/outage|127\.0\.0\.1/);
    const job = (await api(server.url, `/jobs/${id}`, token)).body;
    expect(job.status).toBe('queued');
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('stores an uploaded asset in the bucket, redirects its file URL in presign mode, and reads it back as a job input', async () => {
    s3 = await startS3Server();
    const env = { ...s3.env('e2e/assets'), MEDIAGEN_OUTPUT_URLS: 'presign' };
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '0'], { env });
    const token = await tokenOf(server);
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#c04020' } }).png().toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'photo.png');
    const res = await fetch(`${server.url}/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const asset = (await res.json()) as { image_url: string };
    expect(res.status, JSON.stringify(asset)).toBe(200);
    expect(asset.image_url.startsWith(`${server.url}/assets/files/`)).toBe(true);
    const redirect = await fetch(asset.image_url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')!.startsWith(`${s3.endpoint}/`)).toBe(true);
    expect(Buffer.from(await (await fetch(asset.image_url)).arrayBuffer()).equals(png)).toBe(true);
    expect(Buffer.from(await objectOf(s3, 'e2e/assets', asset.image_url)).equals(png)).toBe(true);
    // The worker reads the asset from the bucket, not through its URL.
    const created = await api(server.url, `/generate/${MODEL}`, token, { method: 'POST', body: { ...BODY, aspect_ratio: '1:1', image_url: asset.image_url } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const until = Date.now() + 30_000;
    let job = created.body;
    while (!['completed', 'failed'].includes(String(job.status)) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await api(server.url, `/jobs/${String(created.body.job_id)}`, token)).body;
    }
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});
