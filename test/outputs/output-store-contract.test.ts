import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import { contentTypeOf, isOutputKey, isOutputName, newOutputKey, outputUrlPath } from '../../src/outputs/output-store.js';
import type { OutputStore } from '../../src/outputs/output-store.js';
import { listAll, text } from '../helpers/output-store.js';
import { s3ClientOf, s3StoreIn } from '../helpers/s3-output-store.js';
import { startS3Server } from '../helpers/s3-server.js';
import type { S3Server } from '../helpers/s3-server.js';

interface StoreKind {
  readonly name: string;
  /** Whether a file opened before its key's removal can still be read whole (an open descriptor). */
  readonly readsRemovedOpenFiles: boolean;
  /** Once per kind: whatever the stores need (a server); `make` then gives a fresh, empty store. */
  start(): Promise<{ make(root: string): OutputStore; stop(): Promise<void> }>;
}

/** Every output store implementation, each made fresh per test: a temporary directory, a fresh bucket prefix. */
const STORES: StoreKind[] = [
  { name: 'disk', readsRemovedOpenFiles: true, start: () => Promise.resolve({ make: (root) => new DiskOutputStore(join(root, 'outputs')), stop: () => Promise.resolve() }) },
  {
    name: 's3',
    readsRemovedOpenFiles: false,
    start: async () => {
      // A real S3-compatible server (s3rver) on loopback; each store its own prefix in its bucket.
      const server: S3Server = await startS3Server();
      const client: S3Client = s3ClientOf(server);
      return {
        make: (root) => s3StoreIn(client, server, root),
        stop: async () => {
          client.destroy();
          await server.close();
        },
      };
    },
  },
];

/** What the worker, the outputs route, the janitor and the services rely on, whatever the store. */
describe.each(STORES)('output store contract: $name', ({ start, readsRemovedOpenFiles }) => {
  let kind: Awaited<ReturnType<StoreKind['start']>>;
  let root: string;
  let store: OutputStore;
  beforeAll(async () => {
    kind = await start();
  });
  afterAll(() => kind.stop());
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mediagen-outputs-'));
    store = kind.make(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** What a run does: write in the scratch, put. */
  async function stored(key: string, files: Record<string, string>): Promise<void> {
    const scratch = await store.scratch(key);
    for (const [name, body] of Object.entries(files)) {
      writeFileSync(join(scratch.dir, name), body);
      await store.put(key, name, join(scratch.dir, name));
    }
    await scratch.dispose();
  }

  it('hands out an empty scratch directory per run, and puts files from it that are then served', async () => {
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    expect(readdirSync(scratch.dir)).toEqual([]);
    writeFileSync(join(scratch.dir, 'a.png'), 'hello');
    writeFileSync(join(scratch.dir, 'work.tmp'), 'not reported');
    await store.put(key, 'a.png', join(scratch.dir, 'a.png'));
    await scratch.dispose();
    await scratch.dispose();
    expect(existsSync(scratch.dir)).toBe(false);
    expect(await store.stat(key, 'a.png')).toMatchObject({ size: 5 });
    expect(await store.stat(key, 'work.tmp')).toBeUndefined();
    const opened = (await store.open(key, 'a.png'))!;
    expect(opened.mtimeMs).toBeGreaterThan(0);
    expect(await text(opened.stream())).toBe('hello');
    const part = (await store.open(key, 'a.png'))!;
    expect(await text(part.stream({ start: 1, end: 3 }))).toBe('ell');
    const unread = (await store.open(key, 'a.png'))!;
    await unread.close();
  });

  it('replaces a file put twice, and starts a new run of the key clean', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'first', 'preview.jpg': 'p' });
    await stored(key, { 'a.png': 'second!' });
    expect(await store.stat(key, 'a.png')).toMatchObject({ size: 7 });
    // The second run's scratch removed what the first stored.
    expect(await store.stat(key, 'preview.jpg')).toBeUndefined();
  });

  it('keeps what a key holds for a scratch with keep (remote uploads), and refuses one for a removed or unstarted key', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'first' });
    const kept = await store.scratch(key, { keep: true });
    expect(readdirSync(kept.dir)).toEqual([]);
    writeFileSync(join(kept.dir, 'b.png'), 'second');
    await store.put(key, 'b.png', join(kept.dir, 'b.png'));
    await kept.dispose();
    expect(await store.stat(key, 'a.png')).toMatchObject({ size: 5 });
    expect(await store.stat(key, 'b.png')).toMatchObject({ size: 6 });
    await store.remove(key);
    await expect(store.scratch(key, { keep: true })).rejects.toThrow();
    await expect(store.scratch(newOutputKey(), { keep: true })).rejects.toThrow();
    expect(await store.stat(key, 'a.png')).toBeUndefined();
  });

  it('refuses a put once the key was removed, so a late writer cannot bring a deleted job\'s files back', async () => {
    const key = newOutputKey();
    const scratch = await store.scratch(key);
    writeFileSync(join(scratch.dir, 'late.png'), 'late');
    await store.remove(key);
    await expect(store.put(key, 'late.png', join(scratch.dir, 'late.png'))).rejects.toThrow();
    expect(await store.stat(key, 'late.png')).toBeUndefined();
    await scratch.dispose();
  });

  it('removes a key idempotently, and one file of it', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'x', 'b.png': 'y' });
    await store.removeFile(key, 'a.png');
    await store.removeFile(key, 'a.png');
    expect(await store.stat(key, 'a.png')).toBeUndefined();
    expect(await store.stat(key, 'b.png')).toBeDefined();
    await store.remove(key);
    await store.remove(key);
    await store.remove(newOutputKey());
    expect(await store.stat(key, 'b.png')).toBeUndefined();
    expect(await store.open(key, 'b.png')).toBeUndefined();
  });

  it('gives an opened file to its reader even if the key is removed meanwhile, or (an object store) fails the read, never other bytes', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'hello' });
    const opened = (await store.open(key, 'a.png'))!;
    expect(opened.size).toBe(5);
    await store.remove(key);
    if (readsRemovedOpenFiles) expect(await text(opened.stream())).toBe('hello');
    else await expect(text(opened.stream())).rejects.toThrow(/removed or replaced/);
  });

  it('gives an opened file to a reader that started before the key was removed', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'hello' });
    const opened = (await store.open(key, 'a.png'))!;
    const reading = opened.stream();
    // The first bytes arrived: the read is under way (an open descriptor, a GetObject answered).
    const first = await new Promise<Buffer>((resolve, reject) => reading.once('data', resolve).once('error', reject));
    reading.pause();
    await store.remove(key);
    reading.resume();
    expect(Buffer.concat([first, Buffer.from(await text(reading))]).toString()).toBe('hello');
  });

  it('lists stored keys for the janitor, and removes listed entries idempotently', async () => {
    expect(await listAll(store)).toEqual([]);
    const a = newOutputKey();
    const b = newOutputKey();
    await stored(a, { 'a.png': 'x' });
    await stored(b, { 'b.png': 'y' });
    const listed = await listAll(store);
    expect(listed.map(({ kind, key }) => ({ kind, key }))).toEqual(
      [a, b].sort((x, y) => x.localeCompare(y)).map((key) => ({ kind: 'key', key })),
    );
    for (const e of listed) {
      expect(e.changedMs).toBeGreaterThan(Date.now() - 60_000);
      await store.removeEntry(e);
      await store.removeEntry(e);
    }
    expect(await listAll(store)).toEqual([]);
  });

  it('answers unchecked keys and names with nothing, and builds no URL of them', async () => {
    const key = newOutputKey();
    await stored(key, { 'a.png': 'x' });
    for (const [k, n] of [[key, '../a.png'], [key, '.hidden'], ['..', 'a.png'], [key.slice(1), 'a.png'], [key, 'missing.png']] as const) {
      expect(await store.stat(k, n), `${k}/${n}`).toBeUndefined();
      expect(await store.open(k, n), `${k}/${n}`).toBeUndefined();
    }
    expect(store.url(key, 'a.png')).toMatch(new RegExp(`/${key}/a\\.png$`));
    // A store hands out presigned URLs only when configured to (s3 with output_urls presign).
    expect(store.presign).toBeUndefined();
    expect(() => store.url(key, '../a.png')).toThrow();
  });
});

describe('output keys and names', () => {
  it('makes keys of 32 base64url characters (192 bits) that are all distinct', () => {
    const keys = Array.from({ length: 1000 }, () => newOutputKey());
    for (const k of keys) {
      expect(k).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(isOutputKey(k)).toBe(true);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(['', 'short', 'a'.repeat(31), 'a'.repeat(33), `${'a'.repeat(31)}=`, `${'a'.repeat(31)}/`, `${'a'.repeat(31)}.`, '../'.repeat(10) + 'aa', `${'a'.repeat(31)}\n`])(
    'isKey refuses %j',
    (text) => expect(isOutputKey(text)).toBe(false),
  );

  it.each(['image.png', 'a', 'out-1_final.MP4', 'x'.repeat(100)])('isName accepts %j', (name) => {
    expect(isOutputName(name)).toBe(true);
  });

  it.each(['', '.', '..', '.hidden', '-x', 'a/b', 'a\\b', '../etc', 'a..b', 'a b', 'é.png', 'x'.repeat(101), 'a%2fb', 'a\0b'])(
    'isName refuses %j',
    (name) => expect(isOutputName(name)).toBe(false),
  );

  it('outputUrlPath spells the served path and refuses unchecked input', () => {
    const key = newOutputKey();
    expect(outputUrlPath(key, 'image.png')).toBe(`/outputs/${key}/image.png`);
    expect(() => outputUrlPath('nope', 'image.png')).toThrow();
  });

  it('contentTypeOf maps the known extensions and nothing else', () => {
    expect(contentTypeOf('a.png')).toBe('image/png');
    expect(contentTypeOf('a.jpg')).toBe('image/jpeg');
    expect(contentTypeOf('a.JPEG')).toBe('image/jpeg');
    expect(contentTypeOf('a.mp4')).toBe('video/mp4');
    expect(contentTypeOf('a.html')).toBe('application/octet-stream');
    expect(contentTypeOf('png')).toBe('application/octet-stream');
  });
});
