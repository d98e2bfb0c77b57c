import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { infraFault } from '../../src/lib/infra-fault.js';
import { newOutputKey } from '../../src/outputs/output-store.js';
import { BUCKET_CHECK_TTL_MS, StorageCheck } from '../../src/outputs/s3/s3-check.js';
import { createS3Client } from '../../src/outputs/s3/s3-client.js';
import { S3OutputStore } from '../../src/outputs/s3/s3-output-store.js';
import { OutputJanitor } from '../../src/services/upkeep/output-janitor.js';
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
  /** Every object under a key as the bucket holds it (`.run`, `<gen>/<name>`), whatever the store serves. */
  const rawKeys = async (prefix: string, key: string): Promise<string[]> => {
    const page = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `${prefix}/${key}/` }));
    return (page.Contents ?? []).map((o) => o.Key!.slice(`${prefix}/${key}/`.length)).sort();
  };
  /** The file names under a key's generations, as the bucket holds them. */
  const rawNames = async (prefix: string, key: string) => (await rawKeys(prefix, key)).filter((k) => k !== '.run').map((k) => k.slice(k.indexOf('/') + 1));

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
    const [objectName] = (await rawKeys('multipart', key)).filter((k) => k.endsWith('/out.mp4'));
    const head = await client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: `multipart/${key}/${objectName}` }));
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
    const prefix = freshPrefix();
    const store = s3StoreIn(client, server, root, { prefix });
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
    // In the bucket: the marker and the current generation's two files, nothing of the old run.
    expect(await rawNames(prefix, key)).toEqual(['a.png', 'b.png']);
    expect(new Set((await rawKeys(prefix, key)).filter((k) => k !== '.run').map((k) => k.split('/')[0])).size).toBe(1);
    await Promise.all([old.dispose(), current.dispose(), kept.dispose()]);
  });

  it("keeps the current run's file when a superseded run's upload lands after the reclaim stored it (same bytes too)", async () => {
    const prefix = freshPrefix();
    const store = s3StoreIn(client, server, root, { prefix });
    const key = newOutputKey();
    const old = await store.scratch(key);
    writeFileSync(join(old.dir, 'out.png'), 'same bytes');
    let current: Awaited<ReturnType<typeof store.scratch>> | undefined;
    let raced = false;
    const name = `race-${randomBytes(4).toString('hex')}`;
    // The old run's upload is on the wire when its lease is lost: the job's next run starts the key
    // again, stores the same file and completes; only then does the old upload land.
    client.middlewareStack.add((next, context) => async (args) => {
      if (!raced && context.commandName === 'PutObjectCommand' && (args.input as { Key?: string }).Key?.endsWith('/out.png')) {
        raced = true;
        current = await store.scratch(key);
        writeFileSync(join(current.dir, 'out.png'), 'same bytes');
        await store.put(key, 'out.png', join(current.dir, 'out.png'));
      }
      return next(args);
    }, { step: 'initialize', name });
    try {
      await expect(store.put(key, 'out.png', join(old.dir, 'out.png'))).rejects.toThrow(/output key/);
    } finally {
      client.middlewareStack.remove(name);
    }
    expect(raced).toBe(true);
    // The completed run's file is still served (before generations, the old run's cleanup deleted it).
    expect(await text((await store.open(key, 'out.png'))!.stream())).toBe('same bytes');
    expect(await rawNames(prefix, key)).toEqual(['out.png']);
    await Promise.all([old.dispose(), current!.dispose()]);
  });

  it("lists an earlier generation's leftovers under a live key as trash, and removing them spares the live generation", async () => {
    const prefix = freshPrefix();
    const store = s3StoreIn(client, server, root, { prefix });
    const key = newOutputKey();
    const put = (objectKey: string, metadata?: Record<string, string>) => client.send(new PutObjectCommand({ Bucket: server.bucket, Key: `${prefix}/${key}/${objectKey}`, Body: 'x', ...(metadata ? { Metadata: metadata } : {}) }));
    // A superseded run's file that the new run's cleanup missed, then (a second later) the new run's marker.
    await put('00000000000000aa/old.png');
    await put('stray.png');
    await new Promise((r) => setTimeout(r, 1100));
    await put('.run', { gen: '00000000000000bb' });
    const kept = await store.scratch(key, { keep: true });
    writeFileSync(join(kept.dir, 'new.png'), 'new');
    await store.put(key, 'new.png', join(kept.dir, 'new.png'));
    expect(await store.names(key)).toEqual(['new.png']);
    expect((await listAll(store)).map((e) => e.kind).sort()).toEqual(['key', 'trash']);
    await store.removeEntry({ kind: 'trash', name: key });
    expect(await rawKeys(prefix, key)).toEqual(['.run', '00000000000000bb/new.png']);
    expect((await listAll(store)).map((e) => e.kind)).toEqual(['key']);
    await kept.dispose();
  });

  it('tells a missing bucket from a missing key: the store refuses (the job is handed back, not failed)', async () => {
    const gone = new S3OutputStore(client, { bucket: 'mediagen-no-such-bucket', prefix: 'p', scratchRoot: join(root, 'scratch') });
    const file = join(root, 'a.png');
    writeFileSync(file, 'a');
    for (const attempt of [() => gone.scratch(newOutputKey(), { keep: true }), () => gone.put(newOutputKey(), 'a.png', file)]) {
      const err = await attempt().then(() => undefined, (e: unknown) => e);
      expect(infraFault(err)).toMatchObject({ kind: 'object_store_refused' });
    }
    // A bucket that is there and a key that is not: plain absence, no fault.
    const err = await s3StoreIn(client, server, root).scratch(newOutputKey(), { keep: true }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(infraFault(err)).toBeUndefined();
  });

  it('aborts a multipart upload whose second part fails, as the store unreachable, and keeps the source file', async () => {
    const store = s3StoreIn(client, server, root, { partBytes: 5 * MiB });
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    const path = join(scratch.dir, 'out.mp4');
    writeFileSync(path, randomBytes(11 * MiB));
    const recording = recordCommands(client);
    const name = `fail-part-${randomBytes(4).toString('hex')}`;
    client.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'UploadPartCommand' && (args.input as { PartNumber?: number }).PartNumber === 2) {
        throw Object.assign(new Error('injected'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } });
      }
      return next(args);
    }, { step: 'initialize', name });
    let err: unknown;
    try {
      err = await store.put(key, 'out.mp4', path).then(() => undefined, (e: unknown) => e);
    } finally {
      client.middlewareStack.remove(name);
      recording.stop();
    }
    expect(infraFault(err)).toMatchObject({ kind: 'object_store_unreachable' });
    expect(existsSync(path)).toBe(true);
    // The parts are aborted (s3rver answers AbortMultipartUpload 405; the part's error is still the one reported).
    expect(recording.sent).toContain('AbortMultipartUploadCommand');
    expect(await store.names(key)).toEqual([]);
    await scratch.dispose();
  });

  it('streams reads through the read client, and everything else through the control client', async () => {
    const readClient = s3ClientOf(server);
    try {
      const store = s3StoreIn(client, server, root, { readClient });
      const key = newOutputKey();
      const scratch = await store.scratch(key);
      writeFileSync(join(scratch.dir, 'a.png'), 'read me');
      await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
      const reads = recordCommands(readClient);
      const control = recordCommands(client);
      expect(await text((await store.open(key, 'a.png'))!.stream())).toBe('read me');
      reads.stop();
      control.stop();
      expect(reads.sent).toEqual(['GetObjectCommand']);
      expect(control.sent).toEqual(['HeadObjectCommand', 'HeadObjectCommand']);
      await scratch.dispose();
    } finally {
      readClient.destroy();
    }
  });

  it('takes away the local scratch of a removed key (a staged upload discarded), and its objects', async () => {
    const prefix = freshPrefix();
    const store = s3StoreIn(client, server, root, { prefix });
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    writeFileSync(join(scratch.dir, 'upload'), 'staged');
    writeFileSync(join(scratch.dir, 'a.png'), 'stored');
    await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
    expect(await rawNames(prefix, key)).toEqual(['a.png']);
    await store.remove(key);
    expect(existsSync(scratch.dir)).toBe(false);
    expect(await rawKeys(prefix, key)).toEqual([]);
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
    await expect(store.presign!(key, '../a.png')).rejects.toThrow();
    // The origin the console's Content-Security-Policy admits for output media.
    expect(await store.presignOrigin!()).toBe(new URL(url).origin);
    expect(s3StoreIn(client, server, root).presignOrigin).toBeUndefined();
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
