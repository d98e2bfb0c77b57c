import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import sharp from 'sharp';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import type { ClaimedJob } from '../../src/services/jobs/job-runs.js';
import type { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import { newOutputKey } from '../../src/outputs/output-store.js';
import { PUBLIC_URL, createTestApp, errorOf, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

const BIN_SIZE = 4096;

/** A real job, claimed as a worker would: only keys a job holds are served. */
async function claimJob(t: TestApp): Promise<ClaimedJob> {
  expect((await generate(t, 'image/vendor-b/model-b-1', { prompt: 'a fox' })).statusCode).toBe(200);
  return (await t.services.runs.claim())!;
}
const jobKey = async (t: TestApp) => (await claimJob(t)).outputKey;

describe('GET /outputs/:key/:name', () => {
  let t: TestApp;
  let outputs: DiskOutputStore;
  let key: string;
  let png: Buffer;
  let bin: Buffer;
  const url = (name: string, k = key) => `/outputs/${k}/${name}`;
  const fetchOutput = (path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
    t.app.inject({ method, url: path, headers });

  beforeAll(async () => {
    t = await createTestApp();
    outputs = t.outputs;
    key = await jobKey(t);
    const dir = await outputs.reset(key);
    png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .png()
      .toBuffer();
    bin = randomBytes(BIN_SIZE);
    writeFileSync(join(dir, 'image.png'), png);
    writeFileSync(join(dir, 'clip.mp4'), bin);
    writeFileSync(join(dir, 'empty.jpg'), '');
    // What a traversal out of <root>/<key> would reach.
    writeFileSync(join(t.dir, 'secret.txt'), 'top secret');
  });
  afterAll(() => t.close());

  it('serves the exact bytes without Authorization, with type, length and cache validators', async () => {
    const res = await fetchOutput(url('image.png'));
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(png)).toBe(true);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-length']).toBe(String(png.length));
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private, max-age=3600, immutable');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{20,}"$/);
    expect(new Date(res.headers['last-modified'] as string).getTime()).toBeGreaterThan(0);
    expect(res.headers['x-request-id']).toBeDefined();

    const video = await fetchOutput(url('clip.mp4'));
    expect(video.statusCode).toBe(200);
    expect(video.headers['content-type']).toBe('video/mp4');
    expect(video.rawPayload.equals(bin)).toBe(true);
  });

  it('gives distinct files distinct ETags', async () => {
    const a = await fetchOutput(url('image.png'), {}, 'HEAD');
    const b = await fetchOutput(url('clip.mp4'), {}, 'HEAD');
    expect(a.headers.etag).not.toBe(b.headers.etag);
  });

  it('answers HEAD with the same headers and no body', async () => {
    const get = await fetchOutput(url('clip.mp4'));
    const head = await fetchOutput(url('clip.mp4'), {}, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
    for (const h of ['content-type', 'content-length', 'accept-ranges', 'etag', 'last-modified', 'cache-control', 'x-content-type-options']) {
      expect(head.headers[h], h).toBe(get.headers[h]);
    }
  });

  it('serves an empty file', async () => {
    const res = await fetchOutput(url('empty.jpg'));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe('0');
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.rawPayload.length).toBe(0);
    expect((await fetchOutput(url('empty.jpg'), { range: 'bytes=0-' })).statusCode).toBe(416);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=100-199', 100, 199],
    ['bytes=0-0', 0, 0],
    ['bytes=4000-', 4000, 4095],
    ['bytes=-100', 3996, 4095],
    ['bytes=-99999', 0, 4095],
    ['bytes=4000-99999', 4000, 4095],
    ['bytes=4095-4095', 4095, 4095],
    [' BYTES=10-19 ', 10, 19],
  ])('%s → 206 with that slice', async (range, start, end) => {
    const res = await fetchOutput(url('clip.mp4'), { range });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${BIN_SIZE}`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.rawPayload.equals(bin.subarray(start, end + 1))).toBe(true);
  });

  it.each(['bytes=4096-', 'bytes=5000-6000', 'bytes=-0', 'bytes=99999999999999999999999-'])(
    '%s → 416 with bytes */size and a JSON error',
    async (range) => {
      const res = await fetchOutput(url('clip.mp4'), { range });
      expect(errorOf(res, 416)).toMatch(/range/);
      expect(res.headers['content-range']).toBe(`bytes */${BIN_SIZE}`);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
    },
  );

  it.each(['bytes=0-1,5-6', 'bytes=0-1, 5-6', 'bytes=abc', 'bytes=-', 'bytes=5-3', 'items=0-1', 'bytes 0-1', 'bytes=0x10-'])(
    'ignores %j and sends the whole file',
    async (range) => {
      const res = await fetchOutput(url('clip.mp4'), { range });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-range']).toBeUndefined();
      expect(res.rawPayload.equals(bin)).toBe(true);
    },
  );

  it('ignores Range on HEAD, for which ranges are not defined', async () => {
    const res = await fetchOutput(url('clip.mp4'), { range: 'bytes=0-9' }, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(BIN_SIZE));
  });

  it('answers 304 to a matching If-None-Match or If-Modified-Since', async () => {
    const { etag, 'last-modified': lastModified } = (await fetchOutput(url('clip.mp4'))).headers as Record<string, string>;
    for (const inm of [etag!, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await fetchOutput(url('clip.mp4'), { 'if-none-match': inm });
      expect(res.statusCode, inm).toBe(304);
      expect(res.rawPayload.length).toBe(0);
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe('private, max-age=3600, immutable');
    }
    expect((await fetchOutput(url('clip.mp4'), { 'if-none-match': etag! }, 'HEAD')).statusCode).toBe(304);
    expect((await fetchOutput(url('clip.mp4'), { 'if-none-match': '"other"' })).statusCode).toBe(200);
    expect((await fetchOutput(url('clip.mp4'), { 'if-modified-since': lastModified! })).statusCode).toBe(304);
    expect((await fetchOutput(url('clip.mp4'), { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect((await fetchOutput(url('clip.mp4'), { 'if-none-match': '"other"', 'if-modified-since': lastModified! })).statusCode).toBe(200);
  });

  it('honours Range only when If-Range names the current ETag', async () => {
    const { etag, 'last-modified': lastModified } = (await fetchOutput(url('clip.mp4'))).headers as Record<string, string>;
    const match = await fetchOutput(url('clip.mp4'), { range: 'bytes=0-9', 'if-range': etag! });
    expect(match.statusCode).toBe(206);
    expect(match.rawPayload.equals(bin.subarray(0, 10))).toBe(true);
    for (const ifRange of ['"stale"', `W/${etag}`, lastModified!]) {
      const res = await fetchOutput(url('clip.mp4'), { range: 'bytes=0-9', 'if-range': ifRange });
      expect(res.statusCode, ifRange).toBe(200);
      expect(res.rawPayload.equals(bin)).toBe(true);
    }
  });

  it('answers 404 JSON for an unknown key or name, with no-store', async () => {
    for (const path of [url('image.png', newOutputKey()), url('nope.png'), url('image.png', 'not-a-key')]) {
      const res = await fetchOutput(path);
      expect(errorOf(res, 404), path).toMatch(/output file/);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect((await fetchOutput(url('nope.png'), {}, 'HEAD')).statusCode).toBe(404);
  });

  // KEY stands for the real key; each path would reach <dir>/secret.txt if the name were trusted.
  it.each([
    '/outputs/KEY/..%2f..%2fsecret.txt',
    '/outputs/KEY/..%2F..%2Fsecret.txt',
    '/outputs/KEY/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/outputs/KEY/%2e%2e',
    '/outputs/KEY/..',
    '/outputs/KEY/..%5c..%5csecret.txt',
    '/outputs/KEY/image.png%00',
    '/outputs/KEY/../../secret.txt',
    '/outputs/..%2fKEY/image.png',
    '/outputs/%2e%2e/secret.txt',
    '/outputs/KEY%2f..%2f..%2f/secret.txt',
    `/outputs/${'a'.repeat(32)}/image.png`,
  ])('refuses %s with 404', async (path) => {
    const res = await fetchOutput(path.replace('KEY', key));
    errorOf(res, 404);
    expect(res.body).not.toContain('top secret');
  });

  it('stops serving a file once its key is removed', async () => {
    const k = await jobKey(t);
    writeFileSync(join(await outputs.reset(k), 'gone.png'), png);
    expect((await fetchOutput(url('gone.png', k))).statusCode).toBe(200);
    await outputs.remove(k);
    errorOf(await fetchOutput(url('gone.png', k)), 404);
  });

  it('serves no file whose key no job holds, though it is on disk (a deleted job left it)', async () => {
    const k = newOutputKey();
    writeFileSync(join(await outputs.reset(k), 'left.png'), png);
    expect(errorOf(await fetchOutput(url('left.png', k)), 404)).toMatch(/output file/);
    expect((await fetchOutput(url('left.png', k), {}, 'HEAD')).statusCode).toBe(404);
  });

  it('serves no file of a failed job, even one its removal left', async () => {
    const job = await claimJob(t);
    writeFileSync(join(await outputs.reset(job.outputKey), 'partial.png'), png);
    expect((await fetchOutput(url('partial.png', job.outputKey))).statusCode).toBe(200);
    expect(await t.services.runs.fail(job, { code: 'engine_failed', message: 'x' })).toMatchObject({ kind: 'ended', outputsGo: true });
    errorOf(await fetchOutput(url('partial.png', job.outputKey)), 404);
  });

  it('is not in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/outputs'))).toEqual([]);
  });
});

describe('/outputs without output files configured', () => {
  let t: TestApp;
  let bare: FastifyInstance;
  beforeAll(async () => {
    t = await createTestApp();
    bare = await buildApp({ ...t.services, publicUrl: () => PUBLIC_URL, outputs: undefined });
  });
  afterAll(async () => {
    await bare.close();
    await t.close();
  });

  it('has no such route', async () => {
    const res = await bare.inject({ method: 'GET', url: `/outputs/${newOutputKey()}/image.png` });
    expect(errorOf(res, 404)).toMatch(/^no route GET \/outputs\//);
  });
});

describe('/outputs over real HTTP', () => {
  const BIG_SIZE = 32 * 1024 * 1024;
  let t: TestApp;
  let base: string;
  let key: string;
  let big: Buffer;

  beforeAll(async () => {
    t = await createTestApp();
    key = await jobKey(t);
    const dir = await t.outputs.reset(key);
    big = randomBytes(BIG_SIZE);
    writeFileSync(join(dir, 'big.mp4'), big);
    writeFileSync(join(t.dir, 'secret.txt'), 'top secret');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  /** A raw request: fetch and inject() would normalise `..` segments before they reach the server. */
  const rawGet = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.path = path;
      req.on('error', reject);
      req.end();
    });

  it('streams a range and the whole file', async () => {
    const part = await fetch(`${base}/outputs/${key}/big.mp4`, { headers: { range: 'bytes=1000000-1000999' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000000-1000999/${BIG_SIZE}`);
    expect(part.headers.get('content-length')).toBe('1000');
    expect(Buffer.from(await part.arrayBuffer()).equals(big.subarray(1000000, 1001000))).toBe(true);

    const whole = await fetch(`${base}/outputs/${key}/big.mp4`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe(String(BIG_SIZE));
    expect(Buffer.from(await whole.arrayBuffer()).equals(big)).toBe(true);
  });

  it('refuses a raw ../ path', async () => {
    for (const path of [`/outputs/${key}/../../secret.txt`, `/outputs/${key}/..%2f..%2fsecret.txt`, `/outputs/../secret.txt`]) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(404);
      expect(res.body).not.toContain('top secret');
    }
  });

  // Linux shows which files the process holds open; elsewhere there is no cheap way to look.
  it.runIf(existsSync('/proc/self/fd'))('closes the file when the client disconnects mid-stream', async () => {
    const path = join(t.outputs.dir(key), 'big.mp4');
    const isOpen = () =>
      readdirSync('/proc/self/fd').some((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === path;
        } catch {
          return false;
        }
      });
    // node:http rather than fetch: undici opens a spare connection after an abort, which would hold close() up.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${base}/outputs/${key}/big.mp4`, { agent: false }, (res) => {
        res.once('data', () => {
          try {
            expect(isOpen()).toBe(true);
            resolve();
          } catch (err) {
            reject(err as Error);
          } finally {
            req.destroy();
          }
        });
      });
      req.on('error', () => undefined);
      req.end();
    });
    for (let i = 0; i < 100 && isOpen(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(isOpen()).toBe(false);
  });
});
