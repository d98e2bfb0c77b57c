import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { infraFault } from '../../src/lib/infra-fault.js';
import { newOutputKey } from '../../src/outputs/output-store.js';
import { BUCKET_CHECK_TTL_MS, StorageCheck } from '../../src/outputs/s3/s3-check.js';
import { createS3Client } from '../../src/outputs/s3/s3-client.js';
import { S3OutputStore } from '../../src/outputs/s3/s3-output-store.js';
import { OutputJanitor } from '../../src/services/output-janitor.js';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { listAll, text } from '../helpers/output-store.js';
import { s3ClientOf, s3StoreIn } from '../helpers/s3-output-store.js';
import { startS3Server } from '../helpers/s3-server.js';
import type { S3Server } from '../helpers/s3-server.js';

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const bytesOf = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/** The names of the commands the client sends until `stop` (the SDK's own middleware stack). */
function recordCommands(client: S3Client): { sent: string[]; stop(): void } {
  const sent: string[] = [];
  const name = `record-${randomBytes(4).toString('hex')}`;
  client.middlewareStack.add((next, context) => (args) => {
    sent.push(context.commandName ?? '?');
    return next(args);
  }, { step: 'initialize', name });
  return { sent, stop: () => void client.middlewareStack.remove(name) };
}

describe('S3 output store', () => {
  let server: S3Server;
  let client: S3Client;
  let root: string;
  beforeAll(async () => {
    server = await startS3Server();
    client = s3ClientOf(server);
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
  });
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mediagen-s3-store-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const freshPrefix = () => `t-${randomBytes(6).toString('hex')}`;
  /** What a removal that failed right after its first step leaves: the key's files without its marker. */
  const removeMarker = (prefix: string, key: string) => client.send(new DeleteObjectCommand({ Bucket: server.bucket, Key: `${prefix}/${key}/.run` }));

  it('streams a file larger than a part up in parts, with its media type, and reads back the same bytes, whole and by range', async () => {
    const store = s3StoreIn(client, server, root, { prefix: 'multipart', partBytes: 5 * MiB });
    const recording = recordCommands(client);
    const { sent } = recording;
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    const body = randomBytes(11 * MiB + 123);
    const path = join(scratch.dir, 'out.mp4');
    writeFileSync(path, body);
    await store.put(key, 'out.mp4', path);
    // The source is consumed, as the disk store's rename consumes it.
    expect(existsSync(path)).toBe(false);
    await scratch.dispose();
    recording.stop();

    // Three parts went up, each at most one part in memory; no single PutObject of the file.
    expect(sent.filter((c) => c === 'UploadPartCommand')).toHaveLength(3);
    expect(sent.filter((c) => c === 'CompleteMultipartUploadCommand')).toHaveLength(1);
    expect(sent.filter((c) => c === 'PutObjectCommand')).toHaveLength(1); // the scratch's marker
    const head = await client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: `multipart/${key}/out.mp4` }));
    expect(head.ContentType).toBe('video/mp4');

    const info = await store.stat(key, 'out.mp4');
    expect(info).toMatchObject({ size: body.length });
    const whole = (await store.open(key, 'out.mp4'))!;
    expect(sha(await bytesOf(whole.stream()))).toBe(sha(body));
    // A range across the first part boundary, and the last bytes.
    for (const range of [{ start: 5 * MiB - 7, end: 5 * MiB + 8 }, { start: body.length - 10, end: body.length - 1 }]) {
      const opened = (await store.open(key, 'out.mp4'))!;
      expect(await bytesOf(opened.stream(range))).toEqual(body.subarray(range.start, range.end + 1));
    }
  });

  it("refuses a put from a run the key's next run superseded, and keeps the newer run's file", async () => {
    const store = s3StoreIn(client, server, root);
    const key = newOutputKey();
    const old = await store.scratch(key);
    writeFileSync(join(old.dir, 'a.png'), 'old run');
    // The job was reclaimed: a new run starts the key again while the old writer still lives.
    const current = await store.scratch(key);
    writeFileSync(join(current.dir, 'a.png'), 'new run');
    await store.put(key, 'a.png', join(current.dir, 'a.png'));
    await expect(store.put(key, 'a.png', join(old.dir, 'a.png'))).rejects.toThrow(/started again/);
    expect(await text((await store.open(key, 'a.png'))!.stream())).toBe('new run');
    // A remote worker's uploads keep the key and are pinned to the run they joined.
    const kept = await store.scratch(key, { keep: true });
    writeFileSync(join(kept.dir, 'b.png'), 'upload');
    await store.put(key, 'b.png', join(kept.dir, 'b.png'));
    expect((await store.names(key)).sort()).toEqual(['a.png', 'b.png']);
    await Promise.all([old.dispose(), current.dispose(), kept.dispose()]);
  });

  it('takes away the local scratch of a removed key (a staged upload discarded), and lists no files of it', async () => {
    const store = s3StoreIn(client, server, root);
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    writeFileSync(join(scratch.dir, 'upload'), 'staged');
    await store.remove(key);
    expect(existsSync(scratch.dir)).toBe(false);
    expect(await store.names(key)).toEqual([]);
  });

  it('answers 302-able presigned URLs only when configured, and they serve the same bytes, by range too', async () => {
    const store = s3StoreIn(client, server, root, { presignTtlSeconds: 120 });
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    writeFileSync(join(scratch.dir, 'a.png'), 'presigned bytes');
    await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
    const url = await store.presign!(key, 'a.png');
    expect(url.startsWith(server.endpoint)).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('120');
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(await whole.text()).toBe('presigned bytes');
    const part = await fetch(url, { headers: { range: 'bytes=10-14' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('bytes');
    expect(() => store.presign!(key, '../a.png')).toThrow();
  });

  describe.each(backends.slice(0, 1))('with the output janitor ($name)', (backend) => {
    let t: TestApp | undefined;
    afterEach(async () => t?.close());

    it('sweeps the bucket: orphans and unfinished removals go, live keys and young entries stay', async () => {
      t = await createTestApp({ backend });
      const prefix = freshPrefix();
      const store = s3StoreIn(client, server, root, { prefix });
      const put = async (key: string, name: string) => {
        const scratch = await store.scratch(key);
        writeFileSync(join(scratch.dir, name), name);
        await store.put(key, name, join(scratch.dir, name));
        await scratch.dispose();
      };
      expect((await generate(t, 'image/vendor-b/model-b-1', { prompt: 'a fox' })).statusCode).toBe(200);
      const running = (await t.services.runs.claim())!;
      await put(running.outputKey, 'output.png');
      const orphan = newOutputKey();
      await put(orphan, 'output.png');
      // A removal that stopped after its marker: the files are left, unservable, for the janitor.
      const half = newOutputKey();
      await put(half, 'output.png');
      await removeMarker(prefix, half);
      expect(await store.stat(half, 'output.png')).toBeUndefined();
      const listed = await listAll(store);
      expect(listed.map((e) => [e.key, e.kind]).sort()).toEqual(
        [[running.outputKey, 'key'], [orphan, 'key'], [half, 'trash']].sort(),
      );

      const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
      // Young entries (everything here was just written) are left alone...
      const now = new ManualClock(Date.now());
      const janitor = new OutputJanitor(t.store.jobs, store, now, log, { intervalMs: 60_000, graceMs: 60_000 });
      expect(await janitor.sweep()).toMatchObject({ scanned: 3, young: 3, orphans: 0, trash: 0 });
      // ...and swept once older than the grace.
      now.advance(120_000);
      expect(await janitor.sweep()).toEqual({ scanned: 3, young: 0, orphans: 1, trash: 1, failed: 0 });
      expect((await listAll(store)).map((e) => e.key)).toEqual([running.outputKey]);
      expect(await store.stat(running.outputKey, 'output.png')).toBeDefined();
    });
  });

  it('leaves listed trash alone when its key came back to life (a new run) before the janitor reached it', async () => {
    const prefix = freshPrefix();
    const store = s3StoreIn(client, server, root, { prefix });
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    writeFileSync(join(scratch.dir, 'a.png'), 'a');
    await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
    await removeMarker(prefix, key);
    const [trash] = await listAll(store);
    expect(trash).toMatchObject({ kind: 'trash', key });
    const again = await store.scratch(key, {});
    writeFileSync(join(again.dir, 'b.png'), 'b');
    await store.put(key, 'b.png', join(again.dir, 'b.png'));
    await store.removeEntry(trash!);
    expect(await store.stat(key, 'b.png')).toBeDefined();
    await Promise.all([scratch.dispose(), again.dispose()]);
  });

  it('counts an unreachable bucket as an infrastructure fault, and says so without naming the bucket, a key or the endpoint', async () => {
    const down = await startS3Server('mediagen-down');
    const downClient = s3ClientOf(down);
    try {
      const store = s3StoreIn(downClient, down, root);
      const key = newOutputKey();
      const scratch = await store.scratch(key);
      writeFileSync(join(scratch.dir, 'a.png'), 'a');
      await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
      const opened = (await store.open(key, 'a.png'))!;
      writeFileSync(join(scratch.dir, 'b.png'), 'b');
      const clock = new ManualClock(0);
      const check = new StorageCheck({ check: async () => ({ ok: true, freeBytes: 1 }) }, downClient, down.bucket, clock);
      expect(await check.check()).toMatchObject({ ok: true, freeBytes: 1 });
      await down.close();

      const port = new URL(down.endpoint).port;
      const failures = await Promise.all([
        store.stat(key, 'a.png'),
        store.put(key, 'b.png', join(scratch.dir, 'b.png')),
        store.scratch(newOutputKey()),
        store.remove(key),
        store.names(key),
        listAll(store),
        text(opened.stream()),
      ].map((p) => p.then(() => undefined, (err: unknown) => err)));
      for (const err of failures) {
        expect(err).toBeInstanceOf(Error);
        expect(infraFault(err)).toMatchObject({ kind: 'object_store_unreachable' });
        const message = (err as Error).message;
        for (const secret of [down.bucket, key, port, '127.0.0.1']) expect(message).not.toContain(secret);
      }
      // The bucket's answer is kept for a while; then the check reports it unreachable: /readyz
      // not ready, job creation refused, no claims.
      expect(await check.check()).toMatchObject({ ok: true });
      clock.advance(BUCKET_CHECK_TTL_MS);
      expect(await check.check()).toMatchObject({ ok: false, kind: 'object_store_unreachable' });
      // A data dir that fails is reported first, without asking the bucket.
      const diskDown = new StorageCheck({ check: async () => ({ ok: false, kind: 'disk_full', freeBytes: 0 }) }, downClient, down.bucket, clock);
      expect(await diskDown.check()).toMatchObject({ ok: false, kind: 'disk_full' });
      await scratch.dispose();
    } finally {
      downClient.destroy();
    }
  });

  it('counts refused credentials as the store refusing, and a missing object as plain absence', async () => {
    const wrong = createS3Client({ kind: 's3', bucket: server.bucket, prefix: '', endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: 'NOT-S3RVER', secretAccessKey: 'nope' } });
    try {
      const store = new S3OutputStore(wrong, { bucket: server.bucket, prefix: 'refused', scratchRoot: join(root, 'scratch') });
      const err = await store.stat(newOutputKey(), 'a.png').then(() => undefined, (e: unknown) => e);
      expect(infraFault(err)).toMatchObject({ kind: 'object_store_refused' });
      expect((err as Error).message).toMatch(/HTTP 403/);
    } finally {
      wrong.destroy();
    }
    expect(await s3StoreIn(client, server, root).stat(newOutputKey(), 'a.png')).toBeUndefined();
  });
});
