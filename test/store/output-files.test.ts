import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputFiles, contentTypeOf } from '../../src/store/files/output-files.js';
import type { OutputEntry } from '../../src/store/files/output-files.js';
import { plantUnremovable, releaseUnremovable } from '../helpers/unremovable.js';

const TRASH = /^\.trash-([A-Za-z0-9_-]{32})-[0-9a-f]{16}$/;

async function listAll(files: OutputFiles): Promise<OutputEntry[]> {
  const out: OutputEntry[] = [];
  for await (const e of files.list()) out.push(e);
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

describe('OutputFiles', () => {
  let root: string;
  let files: OutputFiles;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mediagen-outputs-'));
    files = new OutputFiles(join(root, 'outputs'));
  });
  afterEach(() => {
    releaseUnremovable(root);
    rmSync(root, { recursive: true, force: true });
  });

  it('makes keys of 32 base64url characters (192 bits) that are all distinct', () => {
    const keys = Array.from({ length: 1000 }, () => OutputFiles.newKey());
    for (const k of keys) {
      expect(k).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(OutputFiles.isKey(k)).toBe(true);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(['', 'short', 'a'.repeat(31), 'a'.repeat(33), `${'a'.repeat(31)}=`, `${'a'.repeat(31)}/`, `${'a'.repeat(31)}.`, '../'.repeat(10) + 'aa', `${'a'.repeat(31)}\n`])(
    'isKey refuses %j',
    (text) => expect(OutputFiles.isKey(text)).toBe(false),
  );

  it.each(['image.png', 'a', 'out-1_final.MP4', 'x'.repeat(100)])('isName accepts %j', (name) => {
    expect(OutputFiles.isName(name)).toBe(true);
  });

  it.each(['', '.', '..', '.hidden', '-x', 'a/b', 'a\\b', '../etc', 'a..b', 'a b', 'é.png', 'x'.repeat(101), 'a%2fb', 'a\0b'])(
    'isName refuses %j',
    (name) => expect(OutputFiles.isName(name)).toBe(false),
  );

  it('dir and urlPath refuse unchecked input instead of building a path from it', () => {
    const key = OutputFiles.newKey();
    expect(files.dir(key)).toBe(join(root, 'outputs', key));
    expect(files.urlPath(key, 'image.png')).toBe(`/outputs/${key}/image.png`);
    expect(() => files.dir('../../etc')).toThrow();
    expect(() => files.urlPath(key, '../x')).toThrow();
    expect(() => files.urlPath('nope', 'image.png')).toThrow();
  });

  it('reset creates the directory empty, removing what a previous attempt left', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    expect(dir).toBe(files.dir(key));
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(join(dir, 'partial.png'), 'x');
    mkdirSync(join(dir, 'sub'));
    expect(await files.reset(key)).toBe(dir);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('remove deletes the directory and its files, and is quiet when it is already gone', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    await files.remove(key);
    expect(existsSync(dir)).toBe(false);
    await expect(files.remove(key)).resolves.toBeUndefined();
    await expect(files.remove(OutputFiles.newKey())).resolves.toBeUndefined();
  });

  it('remove takes the key out of reach first: when deleting the files fails, it throws and only a trash directory is left', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    if (!plantUnremovable(dir)) return; // neither chattr nor permissions can stop a deletion here
    // The code depends on how rm meets the refusal (EPERM, EACCES, ENOTDIR...).
    await expect(files.remove(key)).rejects.toMatchObject({ code: expect.any(String) });
    expect(existsSync(dir)).toBe(false);
    expect(await files.stat(key, 'a.png')).toBeUndefined();
    const left = readdirSync(files.root);
    expect(left).toHaveLength(1);
    expect(TRASH.exec(left[0]!)?.[1]).toBe(key);
    // Nothing under the trash name can be reached as a key.
    expect(OutputFiles.isKey(left[0]!)).toBe(false);
    expect(await files.stat(left[0]!, 'a.png')).toBeUndefined();
    // Once the cause is gone, the janitor's removeEntry finishes the job.
    releaseUnremovable(root);
    const [trash] = await listAll(files);
    expect(trash).toMatchObject({ kind: 'trash', key, name: left[0] });
    await files.removeEntry(trash!);
    expect(readdirSync(files.root)).toEqual([]);
  });

  it('retire renames to a fresh trash name each time, and finds nothing to retire when the directory is gone', async () => {
    const key = OutputFiles.newKey();
    await files.reset(key);
    const first = await files.retire(key);
    await files.reset(key);
    const second = await files.retire(key);
    expect(first).toMatch(TRASH);
    expect(second).toMatch(TRASH);
    expect(second).not.toBe(first);
    expect(await files.retire(key)).toBeUndefined();
    expect(readdirSync(files.root).sort()).toEqual([first, second].sort());
  });

  it('list streams the key and trash directories with their change time, and nothing else', async () => {
    const before = Date.now();
    const a = OutputFiles.newKey();
    const b = OutputFiles.newKey();
    await files.reset(a);
    await files.reset(b);
    const trash = (await files.retire(b))!;
    const other = OutputFiles.newKey();
    mkdirSync(join(files.root, '.work-x'));
    writeFileSync(join(files.root, other), 'a file named like a key');
    symlinkSync(files.dir(a), join(files.root, OutputFiles.newKey()));
    mkdirSync(join(files.root, `.trash-${a}`));
    const listed = await listAll(files);
    expect(listed.map(({ kind, name, key }) => ({ kind, name, key }))).toEqual(
      [
        { kind: 'key', name: a, key: a },
        { kind: 'trash', name: trash, key: b },
      ].sort((x, y) => x.name.localeCompare(y.name)),
    );
    for (const e of listed) {
      expect(e.changedMs).toBeGreaterThanOrEqual(before - 1000);
      expect(e.changedMs).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('list of a root that does not exist yet is empty', async () => {
    expect(await listAll(new OutputFiles(join(root, 'nowhere')))).toEqual([]);
  });

  it('removeEntry deletes a listed key or trash directory, idempotently, and refuses any other name', async () => {
    const key = OutputFiles.newKey();
    writeFileSync(join(await files.reset(key), 'a.png'), 'x');
    const trash = (await files.retire(key))!;
    await files.reset(key);
    for (const e of await listAll(files)) {
      await files.removeEntry(e);
      await files.removeEntry(e);
    }
    expect(readdirSync(files.root)).toEqual([]);
    await expect(files.removeEntry({ kind: 'trash', name: '../../etc' })).rejects.toThrow();
    await expect(files.removeEntry({ kind: 'key', name: '..' })).rejects.toThrow();
    expect(trash).toMatch(TRASH);
  });

  it('removeFile deletes one file', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    writeFileSync(join(dir, 'b.png'), 'y');
    await files.removeFile(key, 'a.png');
    await files.removeFile(key, 'a.png');
    expect(readdirSync(dir)).toEqual(['b.png']);
  });

  it('stat gives path, size and mtime of a regular file', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'hello');
    const s = await files.stat(key, 'a.png');
    expect(s).toMatchObject({ path: join(dir, 'a.png'), size: 5 });
    expect(s!.mtimeMs).toBeGreaterThan(0);
  });

  it('stat refuses traversal, bad names, missing files, directories and symlinks', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(root, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'outputs', 'top.txt'), 'top');
    mkdirSync(join(dir, 'sub.png'));
    symlinkSync(join(root, 'secret.txt'), join(dir, 'link.png'));
    for (const name of ['../../secret.txt', '..', '../top.txt', '.', 'sub.png/../../../secret.txt', '%2e%2e', 'missing.png', 'sub.png', 'link.png']) {
      expect(await files.stat(key, name), name).toBeUndefined();
    }
    for (const k of ['..', '../outputs', key.slice(1), '']) {
      expect(await files.stat(k, 'top.txt'), k).toBeUndefined();
    }
    expect(await files.stat(OutputFiles.newKey(), 'a.png')).toBeUndefined();
  });

  it('open gives a handle on the file that outlives its removal', async () => {
    const key = OutputFiles.newKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'hello');
    const opened = (await files.open(key, 'a.png'))!;
    try {
      expect(opened.size).toBe(5);
      await files.remove(key);
      expect((await opened.handle.readFile()).toString()).toBe('hello');
    } finally {
      await opened.handle.close();
    }
    expect(await files.open(key, 'a.png')).toBeUndefined();
    expect(await files.open(key, '../a.png')).toBeUndefined();
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
